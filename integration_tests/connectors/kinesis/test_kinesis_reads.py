"""Bounded and continuous reads, deterministic replay, resharding, throttling, expired positions."""

from __future__ import annotations

import collections
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from connector_base import DataLossError, InvalidOptionError
from connectors.kinesis import (
    KinesisDataSource,
    KinesisOptions,
    KinesisShardSplit,
    KinesisSplitPlanner,
    ShardPosition,
)
from integration_tests.connectors.kinesis.helpers import keyed, options, wait_until, write
from sparkflow_testing.kinesis.endpoint import Gap, KinesisEndpoint, ThrottlingProxy


@pytest.mark.timeout(300)
def test_bounded_read_is_exactly_once_and_in_sequence_order(
    kinesis_endpoint: KinesisEndpoint, spark: Any
) -> None:
    stream = kinesis_endpoint.create_stream(4)
    written = write(kinesis_endpoint, stream, 2000)
    df = spark.read.format("kinesis-unified").options(**options(kinesis_endpoint, stream)).load()
    assert [f.name for f in df.schema.fields] == [
        "data",
        "streamName",
        "shardId",
        "sequenceNumber",
        "partitionKey",
        "approximateArrivalTimestamp",
    ]
    rows = df.collect()
    assert sorted(keyed(rows)) == sorted((d, k) for k, d in written)
    assert {r["streamName"] for r in rows} == {stream}
    # per partition key, the data counter grows with the sequence number (one shard per key here)
    by_key: dict[str, list[tuple[int, bytes]]] = collections.defaultdict(list)
    for r in rows:
        by_key[r["partitionKey"]].append((int(r["sequenceNumber"]), bytes(r["data"])))
    for key, items in by_key.items():
        datas = [d for _s, d in sorted(items)]
        assert datas == sorted(datas), f"key {key} out of order"


@pytest.mark.timeout(300)
def test_bounded_read_honours_starting_and_ending_timestamps(
    kinesis_endpoint: KinesisEndpoint, spark: Any
) -> None:
    stream = kinesis_endpoint.create_stream(2)
    write(kinesis_endpoint, stream, 100, tag="early")
    time.sleep(1.1)
    middle = write(kinesis_endpoint, stream, 100, tag="middle")
    rows = spark.read.format("kinesis-unified").options(**options(kinesis_endpoint, stream)).load().collect()
    stamps = {bytes(r["data"]): r["approximateArrivalTimestamp"] for r in rows}
    first_middle = min(stamps[d] for _k, d in middle)
    last_middle = max(stamps[d] for _k, d in middle)
    time.sleep(1.1)
    write(kinesis_endpoint, stream, 100, tag="late")

    # Spark returns naive datetimes in the session's (= this machine's) time zone; .timestamp() reads them so
    start_ms = round(first_middle.timestamp() * 1000)
    end_ms = round(last_middle.timestamp() * 1000) + 1
    got = (
        spark.read.format("kinesis-unified")
        .options(
            **options(
                kinesis_endpoint,
                stream,
                startingPosition="AT_TIMESTAMP",
                startingTimestamp=str(start_ms),
                endingTimestamp=str(end_ms),
            )
        )
        .load()
        .collect()
    )
    tags = collections.Counter(bytes(r["data"]).split(b"-")[0] for r in got)
    assert tags[b"middle"] == 100 and tags[b"late"] == 0, tags


def _stream_query(
    spark: Any,
    opts: dict[str, str],
    checkpoint: Path,
    sink: list[tuple[int, Any]],
    trigger: dict[str, Any] | None = None,
) -> Any:
    lock = threading.Lock()

    def collect(df: Any, batch_id: int) -> None:
        rows = df.collect()
        with lock:
            sink.extend((batch_id, r) for r in rows)

    return (
        spark.readStream.format("kinesis-unified")
        .options(**opts)
        .load()
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .trigger(**(trigger or {"processingTime": "500 milliseconds"}))
        .start()
    )


@pytest.mark.timeout(300)
def test_continuous_read_picks_up_new_records_exactly_once(
    kinesis_endpoint: KinesisEndpoint, spark: Any, tmp_path: Path
) -> None:
    stream = kinesis_endpoint.create_stream(2)
    expected = write(kinesis_endpoint, stream, 300)
    sink: list[tuple[int, Any]] = []
    query = _stream_query(spark, options(kinesis_endpoint, stream), tmp_path / "chk", sink)
    try:
        wait_until(lambda: len(sink) >= 300, 120, "the first records", query=query)
        for _round in range(3):
            expected += write(kinesis_endpoint, stream, 200)
            time.sleep(0.3)
        wait_until(lambda: len(sink) >= len(expected), 120, "every record", query=query)
        time.sleep(2)  # a duplicate would show up now
        assert query.exception() is None
    finally:
        query.stop()
    assert sorted(keyed([r for _b, r in sink])) == sorted((d, k) for k, d in expected)
    assert len({b for b, _r in sink}) >= 2, "everything came in one micro-batch"


@pytest.mark.timeout(300)
def test_planned_range_is_replayed_exactly(kinesis_endpoint: KinesisEndpoint, spark: Any) -> None:
    """Plan a micro-batch, write more, read the planned range twice: same records, none of the new ones."""
    stream = kinesis_endpoint.create_stream(3)
    first = write(kinesis_endpoint, stream, 600, tag="before")
    time.sleep(1.1)  # the cut is the service's clock (whole seconds) minus the margin
    ds = KinesisDataSource(options(kinesis_endpoint, stream))
    reader = ds.streamReader(ds.schema())
    start = reader.initialOffset()
    end = reader.latestOffset(start, _read_all())
    parts = reader.partitions(start, end)
    late = write(kinesis_endpoint, stream, 300, tag="after")

    def read_all() -> list[tuple[bytes, str]]:
        out = []
        for p in parts:
            for batch in reader.read(p):
                out.extend(
                    zip(
                        batch.column("data").to_pylist(),
                        batch.column("partitionKey").to_pylist(),
                        strict=True,
                    )
                )
        return sorted(out)

    once, twice = read_all(), read_all()
    assert once == twice
    assert once == sorted((d, k) for k, d in first)
    assert not {d for d, _k in once} & {d for _k, d in late}
    for entry in end["splits"].values():
        assert entry["pos"]["k"] == "AT_TIMESTAMP", entry
    reader.stop()


def _read_all() -> Any:
    from pyspark.sql.streaming.datasource import ReadAllAvailable

    return ReadAllAvailable()


@pytest.mark.timeout(400)
def test_split_and_merge_while_a_query_runs(
    kinesis_endpoint: KinesisEndpoint, spark: Any, tmp_path: Path
) -> None:
    reason = kinesis_endpoint.gap_reason(Gap.RESHARDING_ROUTING)
    if reason:
        pytest.skip(reason)
    stream = kinesis_endpoint.create_stream(2)
    expected = write(kinesis_endpoint, stream, 200, keys=20, tag="a")
    sink: list[tuple[int, Any]] = []
    query = _stream_query(
        spark, options(kinesis_endpoint, stream, shardDiscoveryIntervalMs="200"), tmp_path / "chk", sink
    )
    try:
        wait_until(lambda: len(sink) >= len(expected), 120, "the first records", query=query)
        kinesis_endpoint.split_shard(stream, kinesis_endpoint.open_shards(stream)[0]["ShardId"])
        expected += write(kinesis_endpoint, stream, 200, keys=20, tag="b")
        opened = kinesis_endpoint.open_shards(stream)
        kinesis_endpoint.merge_shards(stream, opened[0]["ShardId"], opened[1]["ShardId"])
        expected += write(kinesis_endpoint, stream, 200, keys=20, tag="c")
        wait_until(lambda: len(sink) >= len(expected), 180, "every record after split and merge", query=query)
        time.sleep(2)
        assert query.exception() is None
    finally:
        query.stop()
    rows = [r for _b, r in sink]
    assert sorted(keyed(rows)) == sorted((d, k) for k, d in expected), "records lost or duplicated"
    assert len({r["shardId"] for r in rows}) >= 4, "children were not read"
    # order per partition key: by micro-batch, then by sequence number inside the one shard of the key
    by_key: dict[str, list[tuple[int, str, int, bytes]]] = collections.defaultdict(list)
    for batch_id, r in sink:
        by_key[r["partitionKey"]].append((batch_id, r["shardId"], int(r["sequenceNumber"]), bytes(r["data"])))
    tag_order = {b"a": 0, b"b": 1, b"c": 2}
    for key, items in by_key.items():
        per_batch_shards = collections.defaultdict(set)
        for batch_id, shard, _seq, _d in items:
            per_batch_shards[batch_id].add(shard)
        assert all(len(s) == 1 for s in per_batch_shards.values()), (
            f"key {key} read from two shards in one batch"
        )
        ordered = [d for _b, _s, _q, d in sorted(items)]
        ranks = [(tag_order[d.split(b"-")[0]], d) for d in ordered]
        assert ranks == sorted(ranks), f"key {key} out of order across resharding"


@pytest.mark.timeout(300)
def test_throttling_is_retried_without_loss_or_duplicates(
    kinesis_endpoint: KinesisEndpoint, spark: Any
) -> None:
    stream = kinesis_endpoint.create_stream(3)
    written = write(kinesis_endpoint, stream, 1500)
    proxy = ThrottlingProxy(kinesis_endpoint.url, actions=("GetRecords", "GetShardIterator"), every=2)
    try:
        opts = {**options(kinesis_endpoint, stream, maxRecordsPerFetch="100"), "endpointUrl": proxy.url}
        rows = spark.read.format("kinesis-unified").options(**opts).load().collect()
    finally:
        proxy.stop()
    assert proxy.injected >= 10, proxy.injected
    assert sorted(keyed(rows)) == sorted((d, k) for k, d in written)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fail_on_data_loss", [True, False])
def test_position_older_than_retention(kinesis_endpoint: KinesisEndpoint, fail_on_data_loss: bool) -> None:
    """A checkpointed position older than the retention period fails, or continues from TRIM_HORIZON."""
    stream = kinesis_endpoint.create_stream(1)
    written = write(kinesis_endpoint, stream, 50)
    time.sleep(1.1)
    opts = KinesisOptions.parse(
        options(kinesis_endpoint, stream, failOnDataLoss=str(fail_on_data_loss).lower())
    )
    shard = kinesis_endpoint.list_shards(stream)[0]["ShardId"]
    split = KinesisShardSplit(stream, shard, ShardPosition.trim_horizon())
    planner = KinesisSplitPlanner(opts, streaming=True)
    planner.open()
    old = ShardPosition.at_timestamp(int(time.time() * 1000) - 48 * 3_600_000)  # retention is 24 h
    if fail_on_data_loss:
        with pytest.raises(DataLossError) as info:
            planner.end_positions({shard: (split, old.to_json())})
        assert shard in str(info.value) and "AT_TIMESTAMP(" in str(info.value)
        return
    end = planner.end_positions({shard: (split, old.to_json())})[shard]
    assert end["k"] == "AT_TIMESTAMP"
    from connector_base.runtime.local_runtime import rows_of
    from connector_base.spark.partition_reader import read_splits_as_arrow
    from connectors.kinesis import KinesisSource
    from connectors.kinesis.record_emitter import arrow_schema

    source = KinesisSource(opts, bounded=False)
    ranged = planner.range_splits(split, old.to_json(), end)
    rows = [r for b in read_splits_as_arrow(source, ranged, arrow_schema(False)) for r in rows_of(b)]
    assert sorted((bytes(r[0]), r[4]) for r in rows) == sorted((d, k) for k, d in written)


@pytest.mark.timeout(180)
def test_invalid_options_fail_at_load_and_start(
    kinesis_endpoint: KinesisEndpoint, spark: Any, tmp_path: Path
) -> None:
    stream = kinesis_endpoint.create_stream(1)
    bad = options(kinesis_endpoint, stream, maxTimeWindowPerTrigger="soon")
    with pytest.raises(Exception, match="maxTimeWindowPerTrigger"):
        spark.readStream.format("kinesis-unified").options(**bad).load().writeStream.format(
            "memory"
        ).queryName("bad_kinesis").option("checkpointLocation", str(tmp_path / "c")).start()
    with pytest.raises(Exception, match="startingTimestamp"):
        spark.read.format("kinesis-unified").options(
            **options(kinesis_endpoint, stream, startingPosition="AT_TIMESTAMP")
        ).load()
    with pytest.raises(InvalidOptionError):
        KinesisOptions.parse(options(kinesis_endpoint, stream, failOnDataLoss="sometimes"))


@pytest.mark.timeout(300)
def test_deaggregate_kpl_records(kinesis_endpoint: KinesisEndpoint, spark: Any) -> None:
    from connectors.kinesis import aggregate

    stream = kinesis_endpoint.create_stream(1)
    users = [(f"user-{i}".encode(), f"u{i % 4}") for i in range(30)]
    kinesis_endpoint.put_records(
        stream,
        [
            ("outer-a", aggregate(users[:20])),
            ("plain", b"not aggregated"),
            ("outer-b", aggregate(users[20:])),
        ],
    )
    rows = (
        spark.read.format("kinesis-unified")
        .options(**options(kinesis_endpoint, stream, deaggregate="true"))
        .load()
        .collect()
    )
    assert rows and "subSequenceNumber" in rows[0].asDict()
    got = [(bytes(r["data"]), r["partitionKey"], r["subSequenceNumber"]) for r in rows]
    want = (
        [(d, k, i) for i, (d, k) in enumerate(users[:20])]
        + [(b"not aggregated", "plain", 0)]
        + [(d, k, i) for i, (d, k) in enumerate(users[20:])]
    )
    assert sorted(got) == sorted(want)
    plain = spark.read.format("kinesis-unified").options(**options(kinesis_endpoint, stream)).load().collect()
    assert len(plain) == 3 and "subSequenceNumber" not in plain[0].asDict()


@pytest.mark.timeout(300)
def test_throttled_streaming_query_is_exactly_once(
    kinesis_endpoint: KinesisEndpoint, spark: Any, tmp_path: Path
) -> None:
    """Throttling hits the driver's probes and scans and the executors' reads of a running query."""
    stream = kinesis_endpoint.create_stream(2)
    expected = write(kinesis_endpoint, stream, 400)
    proxy = ThrottlingProxy(
        kinesis_endpoint.url, actions=("GetRecords", "GetShardIterator", "ListShards"), every=3
    )
    sink: list[tuple[int, Any]] = []
    opts = {
        **options(kinesis_endpoint, stream, maxRecordsPerTrigger="150", maxRecordsPerFetch="50"),
        "endpointUrl": proxy.url,
    }
    query = _stream_query(spark, opts, tmp_path / "chk", sink)
    try:
        wait_until(lambda: len(sink) >= len(expected), 120, "the first records", query=query)
        expected += write(kinesis_endpoint, stream, 200)
        wait_until(lambda: len(sink) >= len(expected), 120, "every record", query=query)
        time.sleep(2)
        assert query.exception() is None
    finally:
        query.stop()
        proxy.stop()
    assert proxy.injected >= 10, proxy.injected
    assert sorted(keyed([r for _b, r in sink])) == sorted((d, k) for k, d in expected)
    assert len({b for b, _r in sink}) >= 3, "maxRecordsPerTrigger was not honoured"


@pytest.mark.timeout(300)
def test_max_time_window_per_trigger_splits_bursts(
    kinesis_endpoint: KinesisEndpoint, spark: Any, tmp_path: Path
) -> None:
    stream = kinesis_endpoint.create_stream(1)
    expected = []
    for tag in ("b0", "b1", "b2"):
        expected += write(kinesis_endpoint, stream, 50, tag=tag)
        time.sleep(1.3)
    sink: list[tuple[int, Any]] = []
    query = _stream_query(
        spark, options(kinesis_endpoint, stream, maxTimeWindowPerTrigger="500ms"), tmp_path / "c", sink
    )
    try:
        wait_until(lambda: len(sink) >= len(expected), 120, "every record", query=query)
        assert query.exception() is None
    finally:
        query.stop()
    assert sorted(keyed([r for _b, r in sink])) == sorted((d, k) for k, d in expected)
    tags_per_batch = collections.defaultdict(set)
    for batch_id, r in sink:
        tags_per_batch[batch_id].add(bytes(r["data"]).split(b"-")[0])
    assert all(len(t) == 1 for t in tags_per_batch.values()), dict(tags_per_batch)
    assert len(tags_per_batch) >= 3
