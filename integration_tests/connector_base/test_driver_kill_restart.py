"""SIGKILL the Spark driver mid-query, restart from the checkpoint: every record exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

DRIVER = Path(__file__).with_name("kill_driver.py")
PARTITIONS, ROWS = 3, 4000


def run_driver(checkpoint: Path, output: Path, kill_after_s: float | None) -> bool:
    options = {"partitions": str(PARTITIONS), "rowsPerPartition": str(ROWS), "maxRecordsPerTrigger": "700"}
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, str(DRIVER), "sequence-unified", str(checkpoint), str(output), json.dumps(options)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
        text=True,
    )
    try:
        if kill_after_s is not None:
            # wait until at least one batch was committed, then kill at a point inside the run
            deadline = time.monotonic() + 120
            commits = checkpoint / "commits"
            while time.monotonic() < deadline and proc.poll() is None:
                if commits.exists() and any(commits.iterdir()):
                    break
                time.sleep(0.1)
            time.sleep(kill_after_s)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)
                return False
        out, _ = proc.communicate(timeout=300)
        return "DONE" in out
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.timeout(900)
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
