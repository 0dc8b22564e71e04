"""Sink kill test: a task's Python worker is SIGKILLed mid-write and Spark retries the task.

With ``exactly_once=true`` the killed attempt's transaction is never committed, so every event is
in the stream exactly once. (With ``exactly_once=false`` the retried task writes again: at least once.)
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pravega_helpers import new_stream, read_options, spark

from sparkflow_testing.pravega.cluster import PravegaCluster

pytestmark = [pytest.mark.integration, pytest.mark.spark]
__all__ = ["spark"]

DRIVER = Path(__file__).with_name("pravega_sink_driver.py")
EVENTS = 8000


def _run(cluster: PravegaCluster, scope: str, stream: str, exactly_once: str, marker: Path) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1", PRAVEGA_KILL_MARKER=str(marker))
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[3]), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, str(DRIVER), cluster.controller_uri, scope, stream, exactly_once, str(EVENTS)],
        capture_output=True,
        text=True,
        timeout=400,
        start_new_session=True,
        env=env,
    )
    assert "DONE" in proc.stdout, proc.stderr[-3000:]


def _counts(spark: Any, cluster: PravegaCluster, scope: str, stream: str) -> collections.Counter[bytes]:
    rows = spark.read.format("pravega").options(**read_options(cluster, scope, stream)).load().collect()
    return collections.Counter(bytes(r["event"]) for r in rows)


@pytest.mark.timeout(900)
def test_killed_task_is_retried_without_duplicates_in_exactly_once_mode(
    pravega_cluster: PravegaCluster, spark: Any, tmp_path: Path
) -> None:
    expected = {f"e:{i:08d}".encode() for i in range(EVENTS)}
    scope, stream = new_stream(pravega_cluster, segments=2)
    marker = tmp_path / "killed"
    _run(pravega_cluster, scope, stream, "true", marker)
    assert marker.exists(), "no task attempt was killed"
    counts = _counts(spark, pravega_cluster, scope, stream)
    assert set(counts) == expected
    assert max(counts.values()) == 1, f"{sum(c - 1 for c in counts.values())} duplicated events"
