"""Filter pushdown (``filterPushdown=true``) on batch reads: fewer records fetched, the same rows.

Records fetched are counted where they leave the endpoint: every GetRecords answer passes through
a proxy that adds up its ``Records``.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual, In, LessThan

from connectors.kinesis import KinesisDataSource
from connectors.kinesis.datasource import schema_for
from connectors.kinesis.split import KinesisShardSplit
from integration_tests.connectors.kinesis.helpers import options, write
from sparkflow_testing.kinesis.endpoint import KinesisEndpoint, ThrottlingProxy

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(240)]

CONF = "spark.sql.python.filterPushdown.enabled"
CHUNKS = 10
PER_CHUNK = 60
FETCH = 25
ARRIVAL = "approximateArrivalTimestamp"


class GetRecordsCounter(ThrottlingProxy):
    """A pass-through proxy (it throttles nothing) that counts the records GetRecords returns."""

    def __init__(self, target_url: str) -> None:
        super().__init__(target_url, actions=())
        self.records = 0

    def _forward(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, Any]:
        status, data, rheaders = super()._forward(path, body, headers)
        if status == 200 and (headers.get("X-Amz-Target") or "").endswith(".GetRecords"):
            with self._lock:
                self.records += len(json.loads(data).get("Records") or [])
        return status, data, rheaders


@pytest.fixture
def counter(kinesis_endpoint: KinesisEndpoint) -> Iterator[GetRecordsCounter]:
    proxy = GetRecordsCounter(kinesis_endpoint.url)
    yield proxy
    proxy.stop()


@pytest.fixture
def pushdown_conf(spark: Any) -> Iterator[Any]:
    before = spark.conf.get(CONF, "false")
    spark.conf.set(CONF, "true")
    yield spark
    spark.conf.set(CONF, before)


def fetched(counter: GetRecordsCounter, df: Any) -> tuple[list[tuple[str, bytes]], int]:
    """``df``'s rows (shard, data) and the records GetRecords returned while computing them."""
    before = counter.records
    rows = sorted((r["shardId"], bytes(r["data"])) for r in df.collect())
    return rows, counter.records - before


def test_arrival_time_window_fetches_fewer_records(
    pushdown_conf: Any, kinesis_endpoint: KinesisEndpoint, counter: GetRecordsCounter
) -> None:
    spark = pushdown_conf
    stream = kinesis_endpoint.create_stream(2)
    for chunk in range(CHUNKS):
        write(kinesis_endpoint, stream, PER_CHUNK, tag=f"c{chunk}")
        time.sleep(0.03)
    base = options(kinesis_endpoint, stream, maxRecordsPerFetch=str(FETCH))
    via_proxy = {**base, "endpointUrl": counter.url}
    stamps = spark.read.format("kinesis-unified").options(**base).load().collect()
    first: dict[str, Any] = {}
    for r in stamps:
        chunk = bytes(r["data"]).split(b"-", 1)[0].decode()
        first[chunk] = min(
            first.get(chunk, r["approximateArrivalTimestamp"]), r["approximateArrivalTimestamp"]
        )
    lo, hi = first["c7"], first["c9"]  # chunks 7 and 8
    assert lo < hi

    def window(pushdown: bool) -> Any:
        opts = {**via_proxy, "filterPushdown": "true"} if pushdown else via_proxy
        df = spark.read.format("kinesis-unified").options(**opts).load()
        return df.where((df.approximateArrivalTimestamp >= lo) & (df.approximateArrivalTimestamp < hi))

    expected, read_plain = fetched(counter, window(False))
    got, read_pushed = fetched(counter, window(True))
    assert got == expected
    assert 2 * PER_CHUNK <= len(expected) <= 3 * PER_CHUNK  # a chunk may share a millisecond with the next
    assert read_plain == CHUNKS * PER_CHUNK
    # the start skips the earlier chunks on the service; the end stops within one page of each shard
    assert read_pushed <= len(expected) + 2 * FETCH, (read_pushed, len(expected))
    print(f"{kinesis_endpoint.kind}: fetched {read_pushed} records with pushdown, {read_plain} without")


def planned(endpoint: KinesisEndpoint, stream: str, filters: list[Any]) -> list[KinesisShardSplit]:
    ds = KinesisDataSource({**options(endpoint, stream), "filterPushdown": "true"})
    r = ds.reader(schema_for(False))
    r.pushFilters(filters)
    serializer = ds.create_source(schema_for(False), False).split_serializer
    return [serializer.loads(s) for p in r.partitions() for s in p.splits]


def test_shard_and_stream_filters_drop_shards(kinesis_endpoint: KinesisEndpoint) -> None:
    stream = kinesis_endpoint.create_stream(3)
    write(kinesis_endpoint, stream, 30)
    shards = sorted(s["ShardId"] for s in kinesis_endpoint.list_shards(stream))
    assert len(planned(kinesis_endpoint, stream, [])) == 3
    only = planned(kinesis_endpoint, stream, [In(("shardId",), (shards[0], shards[2]))])
    assert sorted(s.shard_id for s in only) == [shards[0], shards[2]]
    assert planned(kinesis_endpoint, stream, [EqualTo(("streamName",), "other")]) == []
    # an empty time window plans nothing
    t = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    empty = [GreaterThanOrEqual((ARRIVAL,), t), LessThan((ARRIVAL,), t)]
    assert planned(kinesis_endpoint, stream, empty) == []
