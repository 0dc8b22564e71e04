"""The exactly-once streaming sink survives a driver killed inside its ``commit``.

The driver dies right after a micro-batch's transactions committed and before Spark logged the
batch as committed; the restarted query re-runs the batch, and the sink's transaction log keeps the
committed transactions and aborts their replayed twins: every event is in the output once.
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest
from pravega_helpers import keyed_events, new_stream, read_options, run_sink_crash_driver, spark, write_events

from sparkflow_testing.pravega.cluster import PravegaCluster

pytestmark = [pytest.mark.integration, pytest.mark.spark]
__all__ = ["spark"]

EVENTS = 3000
CRASH_BATCH = 2


@pytest.mark.timeout(1200)
def test_driver_killed_after_sink_commit_writes_each_event_once(
    pravega_cluster: PravegaCluster, spark: Any, tmp_path: Path
) -> None:
    in_scope, in_stream = new_stream(pravega_cluster, segments=2)
    out_scope, out_stream = new_stream(pravega_cluster, segments=2)
    events = keyed_events("s", EVENTS, keys=5)
    write_events(pravega_cluster, in_scope, in_stream, events)
    options = {
        "source": read_options(pravega_cluster, in_scope, in_stream),
        "sink": read_options(pravega_cluster, out_scope, out_stream),
    }
    checkpoint = tmp_path / "chk"

    crashed = run_sink_crash_driver(options, checkpoint, CRASH_BATCH)
    assert "DONE" not in crashed.stdout and crashed.returncode == -9, crashed.stderr[-3000:]
    # the kill hit the window: the sink recorded and committed the batch, Spark did not log it
    assert (checkpoint / "sinks" / "pravega" / f"{CRASH_BATCH}.json").exists()
    assert not (checkpoint / "commits" / str(CRASH_BATCH)).exists()

    restarted = run_sink_crash_driver(options, checkpoint, None)
    assert "DONE" in restarted.stdout, restarted.stderr[-3000:]
    assert (checkpoint / "commits" / str(CRASH_BATCH)).exists()

    rows = spark.read.format("pravega").options(**options["sink"]).load().collect()
    counts = collections.Counter(bytes(r["event"]) for r in rows)
    assert set(counts) == {payload for _key, payload in events}
    assert max(counts.values()) == 1, f"{sum(c - 1 for c in counts.values())} duplicated events"
