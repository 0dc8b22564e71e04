"""SIGKILL the Spark driver mid-query, restart from the checkpoint: every record exactly once."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from connector_base.testing.driver_process import run_and_kill_after_first_commit

DRIVER = Path(__file__).with_name("kill_driver.py")
PARTITIONS, ROWS = 3, 4000


def run_driver(checkpoint: Path, output: Path, kill_after_s: float | None) -> bool:
    """Run the query (18 micro-batches when nothing kills it); the time limits are generous because a
    CI machine running the other lanes beside this one took 526 s for the whole test (186 s here)."""
    options = {"partitions": str(PARTITIONS), "rowsPerPartition": str(ROWS), "maxRecordsPerTrigger": "700"}
    args = ["sequence-unified", str(checkpoint), str(output), json.dumps(options)]
    return run_and_kill_after_first_commit(
        DRIVER, args, checkpoint, kill_after_s, first_commit_timeout_s=180, timeout_s=600
    )


@pytest.mark.timeout(1500)
def test_killed_driver_restarts_with_exactly_once_output(tmp_path: Path) -> None:
    checkpoint, output = tmp_path / "chk", tmp_path / "out"
    kills = 0
    for delay in (0.0, 1.5, 3.0):
        if run_driver(checkpoint, output, kill_after_s=delay):
            break
        kills += 1
    assert kills >= 1, "the query finished before any kill: make it longer"
    assert run_driver(checkpoint, output, kill_after_s=None), "the restarted query did not finish"
    table = pq.read_table(str(output))
    keys = list(zip(table.column("partition").to_pylist(), table.column("index").to_pylist(), strict=True))
    assert len(keys) == len(set(keys)), f"{len(keys) - len(set(keys))} duplicated records"
    assert set(keys) == {(p, i) for p in range(PARTITIONS) for i in range(ROWS)}
