"""Streaming reads (``spark.readStream.format("kafka-unified")``)."""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

import pytest

from integration_tests.connectors.kafka.conftest import require
from integration_tests.connectors.kafka.helpers import (
    batch_sizes,
    memory_query,
    produce_transactions,
    reader,
    stream,
    values_of,
    wait_rows,
)
from integration_tests.connectors.parquet_sink import run_available_now
from sparkflow_testing.kafka.broker import Gap, KafkaBroker

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(240)]


def _run_available_now(spark: Any, df: Any, tmp_path: Any) -> tuple[Any, list[Any]]:
    query, table = memory_query(df, tmp_path, {"availableNow": True})
    assert query.awaitTermination(180), "the AvailableNow query did not finish"
    assert query.exception() is None, query.exception()
    return query, spark.sql(f"select * from {table}").collect()


def test_starts_at_latest_by_default(spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any) -> None:
    topic = kafka_cluster.create_topic(2)
    kafka_cluster.produce(topic, [b"old"] * 20)
    query, table = memory_query(stream(spark, kafka_cluster, subscribe=topic).load(), tmp_path)
    try:
        query.processAllAvailable()  # the initial offset (latest) is fixed now
        kafka_cluster.produce(topic, [f"new{i}".encode() for i in range(30)])
        rows = wait_rows(spark, table, 30, query)
        time.sleep(1)
        rows = spark.sql(f"select * from {table}").collect()
    finally:
        query.stop()
    assert sorted(values_of(rows)) == sorted(f"new{i}".encode() for i in range(30))


def test_available_now_honours_max_offsets_per_trigger(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any
) -> None:
    topic = kafka_cluster.create_topic(3)
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(300)], partition=None)
    kafka_cluster.produce(topic, [f"w{i}".encode() for i in range(60)], partition=0)  # uneven backlog
    df = stream(
        spark, kafka_cluster, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger="100"
    ).load()
    query, rows = _run_available_now(spark, df, tmp_path)
    sizes = batch_sizes(query)
    assert len(rows) == 360 and len({(r["partition"], r["offset"]) for r in rows}) == 360
    assert all(s <= 100 for s in sizes) and len(sizes) >= 4, sizes


def test_max_bytes_per_trigger(spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any) -> None:
    topic = kafka_cluster.create_topic(1)
    kafka_cluster.produce(topic, [bytes([65 + i % 26]) * 1000 for i in range(100)])
    df = stream(
        spark, kafka_cluster, subscribe=topic, startingOffsets="earliest", maxBytesPerTrigger="25000"
    ).load()
    query, rows = _run_available_now(spark, df, tmp_path)
    sizes = batch_sizes(query)
    assert len(rows) == 100
    assert all(s <= 25 for s in sizes) and len(sizes) >= 4, sizes  # ~1070 bytes per record with overhead


def test_max_bytes_per_trigger_does_not_starve_a_small_partition(
    spark: Any, kafka_cluster: KafkaBroker
) -> None:
    """100 records of 1 kB on partition 0, 2 on partition 1, at most 10 kB per trigger: partition 1's
    byte share (about 200 bytes) is below one record, and rounds up to one record, as Spark rounds a
    ``maxOffsetsPerTrigger`` share (before: partition 1 got nothing until partition 0 drained)."""
    from integration_tests.connectors.kafka.differential.harness import OURS, run_stream

    topic = kafka_cluster.create_topic(2)
    kafka_cluster.produce(topic, [bytes([65 + i % 26]) * 1000 for i in range(100)], partition=0)
    kafka_cluster.produce(topic, [b"s" * 1000] * 2, partition=1)
    options = {
        "kafka.bootstrap.servers": kafka_cluster.bootstrap,
        "subscribe": topic,
        "startingOffsets": "earliest",
        "maxBytesPerTrigger": "10000",
    }
    out = run_stream(spark, OURS, options, {"availableNow": True})
    assert out.ok, out.summary()
    assert out.batches[0].get(f"{topic}/1") == 1 and out.batches[1].get(f"{topic}/1") == 1, out.batches
    assert len(out.rows) == 102 and all(sum(b.values()) <= 10 for b in out.batches), out.batches


def test_min_offsets_per_trigger_waits_until_max_trigger_delay(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any
) -> None:
    topic = kafka_cluster.create_topic(1)
    df = stream(
        spark,
        kafka_cluster,
        subscribe=topic,
        startingOffsets="earliest",
        minOffsetsPerTrigger="20",
        maxTriggerDelay="6s",
    ).load()
    query, table = memory_query(df, tmp_path)
    try:
        query.processAllAvailable()
        kafka_cluster.produce(topic, [b"x"] * 5)
        time.sleep(2)
        assert spark.sql(f"select * from {table}").count() == 0, (
            "ran before minOffsetsPerTrigger or the delay"
        )
        wait_rows(spark, table, 5, query, timeout_s=30)  # the delay expires
        kafka_cluster.produce(topic, [b"y"] * 25)
        rows = wait_rows(spark, table, 30, query, timeout_s=30)
    finally:
        query.stop()
    assert len(rows) == 30


def test_new_partitions_are_discovered_and_start_at_earliest(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any
) -> None:
    require(kafka_cluster, Gap.CREATE_PARTITIONS)
    from confluent_kafka.admin import NewPartitions

    topic = kafka_cluster.create_topic(2)
    kafka_cluster.produce(topic, [f"a{i}".encode() for i in range(20)])
    df = stream(
        spark, kafka_cluster, subscribe=topic, startingOffsets="earliest", partitionDiscoveryIntervalMs="100"
    ).load()
    query, table = memory_query(df, tmp_path)
    try:
        wait_rows(spark, table, 20, query)
        admin = kafka_cluster.admin()
        for f in admin.create_partitions([NewPartitions(topic, 4)]).values():
            f.result(30)
        kafka_cluster.wait_for_partitions(topic, 4)
        kafka_cluster.produce(topic, [f"b{i}".encode() for i in range(40)])  # round-robin over 4 partitions
        rows = wait_rows(spark, table, 60, query)
        time.sleep(1)
        rows = spark.sql(f"select * from {table}").collect()
    finally:
        query.stop()
    assert len(rows) == 60
    assert sorted(r["offset"] for r in rows if r["partition"] == 3) == list(range(10))


def test_restart_from_checkpoint_continues_exactly(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any
) -> None:
    topic = kafka_cluster.create_topic(2)
    kafka_cluster.produce(topic, [f"a{i}".encode() for i in range(50)])
    out = os.path.join(str(tmp_path), "out")
    chk = os.path.join(str(tmp_path), "chk")

    def run() -> None:
        df = stream(
            spark, kafka_cluster, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger="30"
        )
        q = (
            df.load()
            .selectExpr("value", "partition", "offset")
            .writeStream.format("parquet")
            .option("path", out)
            .option("checkpointLocation", chk)
            .trigger(availableNow=True)
            .start()
        )
        assert q.awaitTermination(120) and q.exception() is None

    run()
    kafka_cluster.produce(topic, [f"b{i}".encode() for i in range(50)])
    run()
    rows = spark.read.parquet(out).collect()
    assert sorted(bytes(r["value"]) for r in rows) == sorted(
        [f"a{i}".encode() for i in range(50)] + [f"b{i}".encode() for i in range(50)]
    )


@pytest.mark.parametrize(("packed_records", "files_per_batch"), [(None, 2), ("0", 6)])
def test_a_micro_batch_packs_small_ranges_into_fewer_tasks(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any, packed_records: str | None, files_per_batch: int
) -> None:
    topic = kafka_cluster.create_topic(6)
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(600)])
    options = {"maxRecordsPerPackedPartition": packed_records} if packed_records else {}
    df = stream(
        spark,
        kafka_cluster,
        subscribe=topic,
        startingOffsets="earliest",
        maxOffsetsPerTrigger="300",
        minPartitions="2",  # the plan's parallelism; fewer than the topic's partitions, so nothing is cut
        **options,
    ).load()
    out, chk = tmp_path / "out", tmp_path / "chk"
    run_available_now(df.selectExpr("value", "partition", "offset"), out, chk)
    rows = spark.read.parquet(str(out)).collect()
    assert sorted((r["partition"], r["offset"]) for r in rows) == [
        (p, o) for p in range(6) for o in range(100)
    ]
    # the file sink writes one file per task of each micro-batch: two micro-batches of six ranges
    # of 50 records, packed into two tasks each (one per range with packing off, as Spark's source)
    assert len(list(out.glob("part-*.parquet"))) == 2 * files_per_batch


def test_partitions_empty_when_the_query_stopped_are_read_after_the_restart(
    spark: Any, reference_broker: KafkaBroker, tmp_path: Any
) -> None:
    """Splits handed out but not read yet are part of the checkpoint (the enumerator counts them as
    assigned), so records that reach them while the query is down are read by the restarted query."""
    topic = reference_broker.create_topic(3)
    first = [f"a{i}".encode() for i in range(20)]
    reference_broker.produce(topic, first, partition=0)
    out, chk = tmp_path / "out", tmp_path / "chk"

    def run() -> None:
        df = stream(spark, reference_broker, subscribe=topic, startingOffsets="earliest").load()
        run_available_now(df.selectExpr("value", "partition"), out, chk)

    run()
    later = {p: [f"{p}-{i}".encode() for i in range(10)] for p in (1, 2)}
    for p, values in later.items():
        reference_broker.produce(topic, values, partition=p)
    run()
    rows = spark.read.parquet(str(out)).collect()
    assert sorted((r["partition"], bytes(r["value"])) for r in rows) == sorted(
        [(0, v) for v in first] + [(p, v) for p, values in later.items() for v in values]
    )


def test_read_committed_stream_crosses_transaction_markers(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any
) -> None:
    require(kafka_cluster, Gap.ABORTED_VISIBLE)
    topic = kafka_cluster.create_topic(1)
    # a producer per transaction: see test_read_committed_fetch_starting_after_an_aborted_transaction
    committed, _every = produce_transactions(kafka_cluster, topic, one_producer=False)
    df = stream(
        spark,
        kafka_cluster,
        subscribe=topic,
        startingOffsets="earliest",
        maxOffsetsPerTrigger="2",
        **{"kafka.isolation.level": "read_committed"},
    ).load()
    _query, rows = _run_available_now(spark, df, tmp_path)
    assert sorted(values_of(rows)) == sorted(committed)


def test_read_committed_fetch_starting_after_an_aborted_transaction(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any
) -> None:
    require(kafka_cluster, Gap.ABORTED_VISIBLE, Gap.ABORTED_TXN_AFTER_MARKER)
    topic = kafka_cluster.create_topic(1)
    committed, _every = produce_transactions(kafka_cluster, topic, one_producer=True)
    rows = reader(
        spark,
        kafka_cluster,
        subscribe=topic,
        startingOffsets=json.dumps({topic: {"0": 10}}),
        **{"kafka.isolation.level": "read_committed"},
    ).load()
    assert sorted(values_of(rows.collect())) == [b"d0", b"d1"]


def test_commit_offsets_to_group_and_start_from_committed(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any
) -> None:
    from confluent_kafka import TopicPartition

    topic = kafka_cluster.create_topic(2)
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(40)])
    group = f"g-{topic}"
    df = stream(
        spark,
        kafka_cluster,
        subscribe=topic,
        startingOffsets="earliest",
        commitOffsetsToGroup="true",
        **{"kafka.group.id": group},
    ).load()
    query, table = memory_query(df, tmp_path)
    consumer = kafka_cluster.consumer(**{"group.id": group})
    try:
        wait_rows(spark, table, 40, query)
        deadline = time.monotonic() + 30
        committed: list[int] = []
        while time.monotonic() < deadline:
            committed = [
                tp.offset for tp in consumer.committed([TopicPartition(topic, p) for p in (0, 1)], timeout=10)
            ]
            if committed == [20, 20]:
                break
            time.sleep(0.5)
    finally:
        query.stop()
        consumer.close()
    assert committed == [20, 20]
    # the group's offsets are where a new query starts with startingOffsets=committed
    kafka_cluster.produce(topic, [b"after"] * 4)
    rows = reader(
        spark, kafka_cluster, subscribe=topic, startingOffsets="committed", **{"kafka.group.id": group}
    )
    assert values_of(rows.load().collect()) == [b"after"] * 4


def test_committed_offsets_fallback(spark: Any, kafka_cluster: KafkaBroker) -> None:
    from confluent_kafka import TopicPartition

    topic = kafka_cluster.create_topic(2)
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(20)])
    group = f"g-{topic}"
    c = kafka_cluster.consumer(**{"group.id": group})
    c.commit(offsets=[TopicPartition(topic, 0, 7)], asynchronous=False)
    c.close()
    opts = {"subscribe": topic, "startingOffsets": "committed", "kafka.group.id": group}
    rows = reader(spark, kafka_cluster, **opts).load().collect()
    assert sorted((r["partition"], r["offset"]) for r in rows) == [(0, o) for o in range(7, 10)] + [
        (1, o) for o in range(10)
    ]
    with pytest.raises(Exception, match="no committed offset"):
        reader(spark, kafka_cluster, committedOffsetsFallback="none", **opts).load().collect()


def test_invalid_stream_options_fail_at_start(spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any) -> None:
    topic = kafka_cluster.create_topic(1)
    df = stream(spark, kafka_cluster, subscribe=topic, endingOffsets="latest").load()
    with pytest.raises(Exception, match="endingOffsets"):
        q, _ = memory_query(df, tmp_path)
        try:
            q.awaitTermination(30)
            raise AssertionError(str(q.exception()))
        finally:
            q.stop()
    with pytest.raises(Exception, match="maxOffsetsPerTrigger"):
        stream(spark, kafka_cluster, subscribe=topic, maxOffsetsPerTrigger="-5").load()
    with pytest.raises(Exception, match=json.dumps("startingOffsets")[1:-1]):
        stream(spark, kafka_cluster, subscribe=topic, startingOffsets="yesterday").load()


@pytest.mark.parametrize("fail", [True, False])
def test_deleted_topic_fails_or_is_dropped(
    spark: Any, reference_broker: KafkaBroker, tmp_path: Any, fail: bool
) -> None:
    keep, doomed = reference_broker.create_topic(1), reference_broker.create_topic(1)
    reference_broker.produce(keep, [b"k"] * 10)
    reference_broker.produce(doomed, [b"d"] * 10)
    df = stream(
        spark,
        reference_broker,
        subscribe=f"{keep},{doomed}",
        startingOffsets="earliest",
        failOnDataLoss=str(fail).lower(),
    ).load()
    query, table = memory_query(df, tmp_path)
    try:
        wait_rows(spark, table, 20, query)
        admin = reference_broker.admin()
        for f in admin.delete_topics([doomed]).values():
            f.result(30)
        reference_broker.produce(keep, [b"k2"] * 5)
        if fail:
            # awaitTermination raises the query's failure; match=: any other failure (Spark's worker
            # start limit on a loaded machine) surfaces whole
            with pytest.raises(Exception, match=re.escape(f"data loss in topic {doomed} partition 0")):
                query.awaitTermination(120)
        else:
            rows = wait_rows(spark, table, 25, query)
            assert sorted(values_of(rows)).count(b"k2") == 5
    finally:
        query.stop()


@pytest.mark.parametrize("fail", [True, False])
def test_records_removed_by_retention_fail_or_are_skipped(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any, fail: bool
) -> None:
    """Retention (not delete_records) removes the first records; batch and stream see the same loss."""
    require(kafka_cluster, Gap.RETENTION)
    # a 10-minute-old first segment, rolled by segment.ms when current records follow, then deleted
    # by the 5-minute retention (the broker checks every second); the current records stay
    topic = kafka_cluster.create_topic(1, **{"retention.ms": "300000", "segment.ms": "60000"})
    old = int(time.time() * 1000) - 600_000
    kafka_cluster.produce(topic, [f"old{i}".encode() for i in range(40)], timestamps=[old] * 40)
    kafka_cluster.produce(topic, [f"new{i}".encode() for i in range(60)])
    _wait_log_start(kafka_cluster, topic, 40)
    start = json.dumps({topic: {"0": 0}})
    options = {"subscribe": topic, "startingOffsets": start, "failOnDataLoss": str(fail).lower()}
    stream_df = stream(spark, kafka_cluster, **options).load()
    if fail:
        with pytest.raises(Exception, match=rf"(?s)topic {re.escape(topic)} partition 0.*\[0, 40\)"):
            reader(spark, kafka_cluster, **options).load().collect()
        query, _table = memory_query(stream_df, tmp_path, {"availableNow": True})
        with pytest.raises(Exception, match=re.escape(f"data loss in topic {topic} partition 0")):
            query.awaitTermination(120)
        return
    rows = reader(spark, kafka_cluster, **options).load().collect()
    assert [r["offset"] for r in rows] == list(range(40, 100))
    _query, streamed = _run_available_now(spark, stream_df, tmp_path)
    assert sorted(r["offset"] for r in streamed) == list(range(40, 100))


def _wait_log_start(broker: KafkaBroker, topic: str, offset: int, timeout_s: float = 60.0) -> None:
    from confluent_kafka import TopicPartition

    consumer = broker.consumer()
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            low, _high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
            if low >= offset:
                assert low == offset, f"retention removed {low} records, expected {offset}"
                return
            time.sleep(0.5)
    finally:
        consumer.close()
    raise AssertionError(f"retention did not remove the first {offset} records of {topic} in {timeout_s}s")
