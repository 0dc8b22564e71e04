"""Kinesis lag in time for backlog (issue 13): the arrival of the first unread record, no extra request."""

from __future__ import annotations

import time

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable

from connectors.kinesis import KinesisDataSource
from connectors.testing.kinesis_endpoint import KinesisEndpoint
from integration_tests.connectors.kinesis.helpers import options, write


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
