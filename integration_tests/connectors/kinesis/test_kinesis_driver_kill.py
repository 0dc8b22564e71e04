"""SIGKILL the driver of a Kinesis query at several points, restart from the checkpoint: exactly-once."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from connector_base.testing.driver_process import run_and_kill_after_first_commit
from integration_tests.connectors.kinesis.helpers import options, write
from sparkflow_testing.kinesis.endpoint import KinesisEndpoint, available_endpoint_kinds

DRIVER = Path(__file__).resolve().parents[2] / "connector_base" / "kill_driver.py"
RECORDS = 6000


def run_driver(checkpoint: Path, output: Path, opts: dict[str, str], kill_after_s: float | None) -> bool:
    args = [
        "kinesis-unified",
        str(checkpoint),
        str(output),
        json.dumps(opts),
        "--columns",
        "data,partitionKey,shardId,sequenceNumber",
    ]
    return run_and_kill_after_first_commit(DRIVER, args, checkpoint, kill_after_s)


@pytest.mark.timeout(900)
def test_killed_driver_restarts_with_exactly_once_output(
    kinesis_endpoint: KinesisEndpoint, tmp_path: Path
) -> None:
    if kinesis_endpoint.kind != available_endpoint_kinds()[0]:
        pytest.skip("runs on the primary endpoint only, to keep the suite's time modest")
    stream = kinesis_endpoint.create_stream(3)
    written = write(kinesis_endpoint, stream, RECORDS, keys=30)
    time.sleep(1.1)  # every record is older than the first cut
    opts = options(kinesis_endpoint, stream, maxRecordsPerTrigger="600")
    checkpoint, output = tmp_path / "chk", tmp_path / "out"
    kills = 0
    for delay in (0.0, 2.0, 4.0):
        if run_driver(checkpoint, output, opts, kill_after_s=delay):
            break
        kills += 1
    assert kills >= 1, "the query finished before any kill: make it longer"
    assert run_driver(checkpoint, output, opts, kill_after_s=None), "the restarted query did not finish"
    table = pq.read_table(str(output))
    datas = table.column("data").to_pylist()
    assert len(datas) == len(set(datas)), f"{len(datas) - len(set(datas))} duplicated records"
    assert set(datas) == {d for _k, d in written}
