"""Kinesis lag in time for backlog (issue 13): the arrival of the first unread record, no extra request."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable

from connectors.kinesis import KinesisDataSource
from integration_tests.connectors.kinesis.helpers import options, write
from integration_tests.connectors.spark_batches import collect_batches
from sparkflow_testing.kinesis.endpoint import KinesisEndpoint, available_endpoint_kinds


@pytest.mark.timeout(300)
def test_time_behind_enters_backlog_and_the_report_shows_it(kinesis_endpoint: KinesisEndpoint) -> None:
    stream = kinesis_endpoint.create_stream(2)
    write(kinesis_endpoint, stream, 50)
    time.sleep(2.2)  # the records are now at least 2 s old
    ds = KinesisDataSource(
        options(kinesis_endpoint, stream, **{"backlog.enterLagMs": "2s", "backlog.exitLagMs": "1s"})
    )
    reader = ds.streamReader(ds.schema())
    start = reader.initialOffset()
    end = reader.latestOffset(start, ReadAllAvailable())
    report = reader.reportLatestOffset()
    reader.stop()
    assert end != start and report is not None
    before = report["lagAtTrigger"]
    assert report["backlog"] is True, report
    assert 2000 <= before["ms"] < 120_000, before
    assert before["maxSplit"]["ms"] == before["ms"]
    assert report["lag"]["ms"] == 0 and report["lag"]["pendingSplits"] == 0, report  # read to the end


@pytest.mark.timeout(300)
def test_a_catching_up_batch_takes_the_backlog_limit(
    spark: Any, kinesis_endpoint: KinesisEndpoint, tmp_path: Path
) -> None:
    """``backlog.maxRecordsPerTrigger`` raises the limit while catching up, and the planner scans the
    shard up to it to place the batch's end (its scan stopped at ``maxRecordsPerTrigger`` + 1, so it
    found no end inside and the first batch read everything)."""
    if kinesis_endpoint.kind != available_endpoint_kinds()[0]:
        pytest.skip("runs on the primary endpoint only, to keep the suite's time modest")
    stream = kinesis_endpoint.create_stream(1)
    written = []
    for _chunk in range(8):  # positions are arrival times: a batch can end only between two of them
        written += write(kinesis_endpoint, stream, 50)
        time.sleep(0.05)
    time.sleep(1.2)  # a second behind: in backlog by time (Kinesis measures its lag in time only)
    opts = options(
        kinesis_endpoint,
        stream,
        maxRecordsPerTrigger="50",
        **{"backlog.maxRecordsPerTrigger": "200", "backlog.enterLagMs": "1s", "backlog.exitLagMs": "100"},
    )
    df = spark.readStream.format("kinesis-unified").options(**opts).load()
    kept = collect_batches(df, tmp_path / "cp", lambda batch, row: (batch, bytes(row["data"])))
    sizes: dict[int, int] = {}
    for batch, _data in kept:
        sizes[batch] = sizes.get(batch, 0) + 1
    assert [n for _b, n in sorted(sizes.items())] == [200, 200], sizes
    assert sorted(d for _b, d in kept) == sorted(d for _k, d in written)
