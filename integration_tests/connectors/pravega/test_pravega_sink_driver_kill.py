"""The exactly-once streaming sink survives a driver killed inside its ``commit``, twice.

1. The driver dies inside a micro-batch's commit right after the sink logged the batch's
   transactions and before it committed any; the transactions are then aborted (as their lease
   would run out before a late restart).
2. The restarted query re-runs the batch: the recorded transactions are aborted, so the replayed
   ones replace them, and the log must record the replacements *before* they are committed. The
   driver dies again right after that commit, before Spark logged the batch as committed.
3. The query is restarted once more and finishes: the log's transactions committed, so it keeps
   them and aborts their replayed twins. (Had the log kept the aborted ids, this run would replace
   them again and commit the batch a second time.)
Every event is in the output stream exactly once.
"""

from __future__ import annotations

import collections
import json
import time
from pathlib import Path
from typing import Any

import pytest
from pravega_helpers import keyed_events, new_stream, read_options, run_sink_crash_driver, spark, write_events

from connector_base import ConnectorError
from connectors.pravega.controller_client import shared_controller
from connectors.pravega.options import PravegaSinkOptions
from sparkflow_testing.pravega.cluster import PravegaCluster

pytestmark = [pytest.mark.integration, pytest.mark.spark]
__all__ = ["spark"]

EVENTS = 1500
CRASH_BATCH = 1
ABORTED = ("ABORTING", "ABORTED")


def _recorded(checkpoint: Path) -> list[int]:
    record = json.loads((checkpoint / "sinks" / "pravega" / f"{CRASH_BATCH}.json").read_text())
    return [int(t, 16) for t in record["transactions"] if t is not None]


@pytest.mark.timeout(1500)
def test_a_replacement_transaction_is_logged_before_it_commits(
    pravega_cluster: PravegaCluster, spark: Any, tmp_path: Path
) -> None:
    in_scope, in_stream = new_stream(pravega_cluster, segments=2)
    out_scope, out_stream = new_stream(pravega_cluster, segments=2)
    events = keyed_events("r", EVENTS, keys=5)
    write_events(pravega_cluster, in_scope, in_stream, events)
    options = {
        "source": read_options(pravega_cluster, in_scope, in_stream),
        "sink": read_options(pravega_cluster, out_scope, out_stream),
    }
    checkpoint = tmp_path / "chk"
    controller = shared_controller(PravegaSinkOptions.parse(options["sink"]).connection)

    crashed = run_sink_crash_driver(options, checkpoint, CRASH_BATCH, "after-log")
    assert "DONE" not in crashed.stdout and crashed.returncode == -9, crashed.stderr[-3000:]
    first = _recorded(checkpoint)
    assert first, "the sink logged no transaction for the batch"
    for txn in first:  # a lease that ran out before the restart
        try:
            controller.end_txn(out_scope, out_stream, txn, commit=False)
        except ConnectorError:
            assert controller.txn_state(out_scope, out_stream, txn) in ABORTED
    deadline = time.monotonic() + 60
    while any(controller.txn_state(out_scope, out_stream, t) != "ABORTED" for t in first):
        assert time.monotonic() < deadline, "the recorded transactions were not aborted"
        time.sleep(0.2)

    replaced = run_sink_crash_driver(options, checkpoint, CRASH_BATCH, "after-commit")
    assert "DONE" not in replaced.stdout and replaced.returncode == -9, replaced.stderr[-3000:]
    assert not (checkpoint / "commits" / str(CRASH_BATCH)).exists()
    second = _recorded(checkpoint)
    assert not set(second) & set(first), f"the log still records the aborted transactions {first}"
    assert all(controller.txn_state(out_scope, out_stream, t) in ("COMMITTING", "COMMITTED") for t in second)

    finished = run_sink_crash_driver(options, checkpoint, None)
    assert "DONE" in finished.stdout, finished.stderr[-3000:]
    assert (checkpoint / "commits" / str(CRASH_BATCH)).exists()
    rows = spark.read.format("pravega").options(**options["sink"]).load().collect()
    counts = collections.Counter(bytes(r["event"]) for r in rows)
    assert set(counts) == {payload for _key, payload in events}
    assert max(counts.values()) == 1, f"{sum(c - 1 for c in counts.values())} duplicated events"
