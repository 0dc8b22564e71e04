"""SIGKILL the Spark driver of a Pravega -> Parquet query, restart from the checkpoint: exactly once.

The stream was scaled half-way through the data, so the restarted driver also rebuilds the
enumerator (segments handed out, successors) from the offset in Spark's log.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pravega_helpers import keyed_events, new_stream, read_options, write_events

from connector_base.testing.driver_process import run_and_kill_after_first_commit
from sparkflow_testing.pravega.cluster import PravegaCluster

pytestmark = [pytest.mark.integration, pytest.mark.spark]

DRIVER = Path(__file__).resolve().parents[2] / "connector_base" / "kill_driver.py"
EVENTS = 6000


def run_driver(checkpoint: Path, output: Path, options: dict[str, str], kill_after_s: float | None) -> bool:
    args = ["pravega", str(checkpoint), str(output), json.dumps(options)]
    return run_and_kill_after_first_commit(DRIVER, args, checkpoint, kill_after_s)


@pytest.mark.timeout(1200)
def test_killed_driver_restarts_with_exactly_once_output(
    pravega_cluster: PravegaCluster, tmp_path: Path
) -> None:
    cluster = pravega_cluster
    scope, stream = new_stream(cluster, segments=3)
    first = keyed_events("d", EVENTS // 2, keys=9)
    write_events(cluster, scope, stream, first)
    segment = cluster.admin.active_segments(scope, stream)[0]["id"]
    cluster.admin.split(scope, stream, segment)
    second = keyed_events("d", EVENTS // 2, keys=9, start=EVENTS // 2)
    write_events(cluster, scope, stream, second)
    options = read_options(cluster, scope, stream, maxEventsPerTrigger="500")
    checkpoint, output = tmp_path / "chk", tmp_path / "out"
    kills = 0
    for delay in (0.0, 2.0, 4.0):
        if run_driver(checkpoint, output, options, kill_after_s=delay):
            break
        kills += 1
    assert kills >= 1, "the query finished before any kill: make it longer"
    assert run_driver(checkpoint, output, options, kill_after_s=None), "the restarted query did not finish"
    events = [bytes(e) for e in pq.read_table(str(output)).column("event").to_pylist()]
    assert len(events) == len(set(events)), f"{len(events) - len(set(events))} duplicated events"
    assert set(events) == {p for _k, p in first + second}
