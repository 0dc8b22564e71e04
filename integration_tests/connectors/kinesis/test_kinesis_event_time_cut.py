"""``eventTime.alignment=cut`` on Spark for ``kinesis-unified``: batches by arrival time.

Shard "behind" gets its records first, shard "ahead" ``SKEW_S`` later (arrival times cannot be
forged, so the skew is made by waiting). With ``maxRecordsPerTrigger`` below one shard's backlog, the
cut reads the records that arrived first, whichever shard holds them: every batch's records arrived
before every later batch's, and every record comes once. Without the cut the limit is spread over
both shards, so the first batch mixes them and a 500 ms watermark drops the rest of the shard
behind as late; with the cut it drops none.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from integration_tests.connectors.kinesis.helpers import keyed, options, wait_until, write
from integration_tests.connectors.spark_batches import collect_batches, run_to_memory
from sparkflow_testing.kinesis.endpoint import Gap, KinesisEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

CHUNKS = 4
CHUNK = 30
SKEW_S = 1.5
LIMIT = 70


def _put(endpoint: KinesisEndpoint, stream: str, hash_key: str, tag: str) -> None:
    for c in range(CHUNKS):  # a few arrival times, so the cut can fall between them
        endpoint.put_records(
            stream,
            [(f"{tag}-{i}", f"{tag}-{c}-{i:03d}".encode()) for i in range(CHUNK)],
            [hash_key] * CHUNK,
        )
        time.sleep(0.05)


@pytest.fixture(scope="module")
def skewed(kinesis_endpoint: KinesisEndpoint) -> tuple[str, str, str]:
    """``(stream, shard id behind, shard id ahead)``."""
    endpoint = kinesis_endpoint
    stream = endpoint.create_stream(shards=2)
    endpoint.wait_active(stream)
    shards = sorted(endpoint.open_shards(stream), key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]))
    _put(endpoint, stream, shards[0]["HashKeyRange"]["StartingHashKey"], "behind")
    time.sleep(SKEW_S)
    _put(endpoint, stream, shards[1]["HashKeyRange"]["StartingHashKey"], "ahead")
    time.sleep(1.5)  # the planner's cut is the service clock's whole second: let it pass the last record
    return stream, shards[0]["ShardId"], shards[1]["ShardId"]


def _run(spark: Any, endpoint: KinesisEndpoint, stream: str, checkpoint: Path, **extra: str) -> list[Any]:
    opts = options(endpoint, stream, maxRecordsPerTrigger=str(LIMIT), **extra)
    df = (
        spark.readStream.format("kinesis-unified")
        .options(**opts)
        .load()
        .select("shardId", "approximateArrivalTimestamp", "data")
    )
    return collect_batches(
        df, checkpoint, lambda batch_id, r: (batch_id, r[0], int(r[1].timestamp() * 1000 + 0.5), bytes(r[2]))
    )


def test_cut_reads_by_arrival_time_across_shards_and_every_record_once(
    kinesis_endpoint: KinesisEndpoint, spark: Any, skewed: tuple[str, str, str], tmp_path: Path
) -> None:
    stream, behind, ahead = skewed
    rows = _run(
        spark,
        kinesis_endpoint,
        stream,
        tmp_path / "cut",
        **{"eventTime.alignment": "cut", "alignment.maxDrift": "100ms"},
    )
    counts = Counter(r[3] for r in rows)
    assert len(counts) == 2 * CHUNKS * CHUNK and set(counts.values()) == {1}, counts.most_common(3)
    batches: dict[int, list[tuple[int, str, int, bytes]]] = {}
    for r in rows:
        batches.setdefault(r[0], []).append(r)
    order = sorted(batches)
    assert len(order) >= 3, f"the limit made only {len(order)} batches"
    for b in order:
        assert len(batches[b]) <= LIMIT
    for earlier, later in zip(order, order[1:], strict=False):
        newest = max(r[2] for r in batches[earlier])
        oldest = min(r[2] for r in batches[later])
        assert newest < oldest, (
            f"batch {earlier} read a record arriving at {newest}, batch {later} one at {oldest}"
        )
    assert {r[1] for r in batches[order[0]]} == {behind}, "the first batch read the shard ahead"


def _dropped_by_watermark(
    spark: Any, endpoint: KinesisEndpoint, stream: str, checkpoint: Path, **extra: str
) -> int:
    """Rows a 500 ms watermark (dedup + 1 s windowed count, update mode) dropped as late; all counted."""
    from pyspark.sql import functions as F

    opts = options(endpoint, stream, maxRecordsPerTrigger=str(LIMIT), **extra)
    name = f"kinesis_wm_{checkpoint.name}"
    counts = (
        spark.readStream.format("kinesis-unified")
        .options(**opts)
        .load()
        .withWatermark("approximateArrivalTimestamp", "500 milliseconds")
        .dropDuplicatesWithinWatermark(["shardId", "sequenceNumber"])
        .groupBy(F.window("approximateArrivalTimestamp", "1 second"))
        .count()
    )
    read, dropped = run_to_memory(counts, name, checkpoint, output_mode="update")
    assert read == 2 * CHUNKS * CHUNK, f"the source read {read} rows"
    return dropped


def test_a_watermark_drops_no_row_with_the_cut_and_some_without(
    kinesis_endpoint: KinesisEndpoint, spark: Any, skewed: tuple[str, str, str], tmp_path: Path
) -> None:
    stream, _behind, _ahead = skewed
    cut = _dropped_by_watermark(
        spark, kinesis_endpoint, stream, tmp_path / "cut", **{"eventTime.alignment": "cut"}
    )
    off = _dropped_by_watermark(spark, kinesis_endpoint, stream, tmp_path / "off")
    assert (cut, off > 0) == (0, True), f"dropped as late: {cut} with the cut, {off} without"


def test_cut_refuses_a_column_the_driver_cannot_see(kinesis_endpoint: KinesisEndpoint, spark: Any) -> None:
    opts = options(kinesis_endpoint, "any", **{"eventTime.alignment": "cut", "eventTime.column": "data"})
    with pytest.raises(Exception, match="approximateArrivalTimestamp"):
        spark.readStream.format("kinesis-unified").options(**opts).load()


@pytest.mark.timeout(300)
def test_cut_reads_parents_to_shard_end_and_then_their_children(
    kinesis_endpoint: KinesisEndpoint, spark: Any, tmp_path: Path
) -> None:
    """A split while a query with the cut runs: the closed parent reaches SHARD_END, children follow."""
    reason = kinesis_endpoint.gap_reason(Gap.RESHARDING_ROUTING)
    if reason:
        pytest.skip(reason)
    stream = kinesis_endpoint.create_stream(2)
    expected = write(kinesis_endpoint, stream, 100, keys=20, tag="a")
    sink: list[Any] = []
    lock = threading.Lock()

    def collect(df: Any, batch_id: int) -> None:
        rows = df.collect()
        with lock:
            sink.extend(rows)

    opts = options(
        kinesis_endpoint,
        stream,
        shardDiscoveryIntervalMs="200",
        **{"eventTime.alignment": "cut", "eventTime.idleTimeout": "2s"},
    )
    query = (
        spark.readStream.format("kinesis-unified")
        .options(**opts)
        .load()
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        wait_until(lambda: len(sink) >= len(expected), 120, "the first records", query=query)
        kinesis_endpoint.split_shard(stream, kinesis_endpoint.open_shards(stream)[0]["ShardId"])
        expected += write(kinesis_endpoint, stream, 100, keys=20, tag="b")
        wait_until(lambda: len(sink) >= len(expected), 120, "every record after the split", query=query)
        assert query.exception() is None, query.exception()
    finally:
        query.stop()
    assert sorted(keyed(sink)) == sorted((d, k) for k, d in expected), "records lost or duplicated"
    assert len({r["shardId"] for r in sink}) >= 3, "the children were not read"
