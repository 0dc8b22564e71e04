"""Batch reads (``spark.read.format("kafka-unified")``) on every broker that can run here."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from integration_tests.connectors.kafka.conftest import require
from integration_tests.connectors.kafka.helpers import produce_transactions, reader, values_of
from sparkflow_testing.kafka.broker import Gap, KafkaBroker

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(240)]


def test_reads_every_record_with_spark_columns(spark: Any, kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(3)
    values = [f"v{i}".encode() for i in range(900)]
    kafka_cluster.produce(topic, values, keys=[f"k{i}".encode() for i in range(900)])
    df = reader(spark, kafka_cluster, subscribe=topic).load()
    assert df.columns == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    rows = df.collect()
    assert sorted(values_of(rows)) == sorted(values)
    by_partition: dict[int, list[int]] = {}
    for r in rows:
        assert r["topic"] == topic and r["timestampType"] == 0 and r["timestamp"] is not None
        assert bytes(r["key"]) == b"k" + bytes(r["value"])[1:]
        by_partition.setdefault(r["partition"], []).append(r["offset"])
    assert {p: sorted(o) for p, o in by_partition.items()} == {p: list(range(300)) for p in range(3)}


def test_replay_returns_the_same_records(spark: Any, kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(2)
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(200)])
    ending = json.dumps({topic: {"0": 60, "1": -1}})
    df = reader(spark, kafka_cluster, subscribe=topic, endingOffsets=ending).load()
    first = sorted((r["partition"], r["offset"], bytes(r["value"])) for r in df.collect())
    kafka_cluster.produce(topic, [b"later"] * 10, partition=0)
    second = sorted((r["partition"], r["offset"], bytes(r["value"])) for r in df.collect())
    assert len(first) == 160
    # the same plan read twice: partition 0 is bounded, partition 1 is planned anew (-1 = latest)
    assert [x for x in second if x[0] == 0] == [x for x in first if x[0] == 0]


def test_starting_and_ending_offsets_json(spark: Any, kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(2)
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(100)])
    df = reader(
        spark,
        kafka_cluster,
        subscribe=topic,
        startingOffsets=json.dumps({topic: {"0": 10, "1": -2}}),
        endingOffsets=json.dumps({topic: {"0": 20, "1": -1}}),
    ).load()
    got = sorted((r["partition"], r["offset"]) for r in df.collect())
    assert got == [(0, o) for o in range(10, 20)] + [(1, o) for o in range(50)]


def test_assign_and_subscribe_pattern(spark: Any, kafka_cluster: KafkaBroker) -> None:
    prefix = f"pat{int(time.time() * 1000)}"
    a = kafka_cluster.create_topic(2, name=f"{prefix}-a")
    b = kafka_cluster.create_topic(1, name=f"{prefix}-b")
    kafka_cluster.produce(a, [b"a"] * 10)
    kafka_cluster.produce(b, [b"b"] * 5)
    assert reader(spark, kafka_cluster, subscribePattern=f"{prefix}-.*").load().count() == 15
    assigned = reader(spark, kafka_cluster, assign=json.dumps({a: [1], b: [0]})).load().collect()
    assert sorted((r["topic"], r["partition"]) for r in assigned) == [(a, 1)] * 5 + [(b, 0)] * 5
    assert reader(spark, kafka_cluster, subscribe=f"{a},{b}").load().count() == 15


def test_headers(spark: Any, kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(1)
    headers = [[("h1", b"x"), ("h2", None)], None, [("h1", b"y")]]
    kafka_cluster.produce(topic, [b"0", b"1", b"2"], headers=headers)
    rows = (
        reader(spark, kafka_cluster, subscribe=topic, includeHeaders="true")
        .load()
        .orderBy("offset")
        .collect()
    )
    got = [None if r["headers"] is None else [(h["key"], h["value"]) for h in r["headers"]] for r in rows]
    assert got == [[("h1", b"x"), ("h2", None)], None, [("h1", b"y")]]
    assert "headers" not in reader(spark, kafka_cluster, subscribe=topic).load().columns


def test_min_partitions_splits_large_ranges(spark: Any, kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(2)
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(400)])
    df = reader(spark, kafka_cluster, subscribe=topic, minPartitions="6").load()
    assert df.rdd.getNumPartitions() >= 6
    rows = df.collect()
    assert sorted((r["partition"], r["offset"]) for r in rows) == [
        (p, o) for p in range(2) for o in range(200)
    ]


def test_small_ranges_share_tasks_and_each_record_is_read_once(
    spark: Any, kafka_cluster: KafkaBroker
) -> None:
    topic = kafka_cluster.create_topic(6)
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(600)])
    expected = [(p, o) for p in range(6) for o in range(100)]
    # minPartitions below the topic's partitions cuts nothing (Spark's meaning) and sets the plan's
    # parallelism: six ranges of 100 records are packed into two tasks
    packed = reader(spark, kafka_cluster, subscribe=topic, minPartitions="2").load()
    assert packed.rdd.getNumPartitions() == 2
    per_task = packed.rdd.mapPartitions(lambda rows: [sorted({r["partition"] for r in rows})]).collect()
    assert sorted(p for task in per_task for p in task) == list(range(6))
    assert sorted((r["partition"], r["offset"]) for r in packed.collect()) == expected
    # 0: one task per offset range, as Spark's own source
    apart = reader(
        spark, kafka_cluster, subscribe=topic, minPartitions="2", maxRecordsPerPackedPartition="0"
    ).load()
    assert apart.rdd.getNumPartitions() == 6
    assert sorted((r["partition"], r["offset"]) for r in apart.collect()) == expected
    # ranges larger than a packed task holds keep a task each
    alone = reader(
        spark, kafka_cluster, subscribe=topic, minPartitions="2", maxRecordsPerPackedPartition="8200"
    ).load()
    assert alone.rdd.getNumPartitions() == 6


BASE_MS = 1_700_000_000_000


def _timestamped_topic(broker: KafkaBroker) -> str:
    topic = broker.create_topic(2)
    # partition 0 holds BASE+0,2,4,..,18 (offsets 0..9); partition 1 holds BASE+1,3,..,19
    broker.produce(topic, [f"v{i}".encode() for i in range(20)], timestamps=[BASE_MS + i for i in range(20)])
    return topic


def test_starting_timestamp(spark: Any, kafka_cluster: KafkaBroker) -> None:
    require(kafka_cluster, Gap.OFFSETS_FOR_TIMES, Gap.OFFSETS_FOR_TIMES_EXPIRES)
    topic = _timestamped_topic(kafka_cluster)
    rows = reader(spark, kafka_cluster, subscribe=topic, startingTimestamp=str(BASE_MS + 10)).load().collect()
    assert sorted(values_of(rows)) == sorted(f"v{i}".encode() for i in range(10, 20))


def test_starting_offsets_by_timestamp(spark: Any, kafka_cluster: KafkaBroker) -> None:
    require(kafka_cluster, Gap.OFFSETS_FOR_TIMES, Gap.OFFSETS_FOR_TIMES_EXPIRES)
    topic = _timestamped_topic(kafka_cluster)
    per = json.dumps({topic: {"0": BASE_MS + 16, "1": BASE_MS + 1}})
    rows = reader(spark, kafka_cluster, subscribe=topic, startingOffsetsByTimestamp=per).load().collect()
    assert sorted(r["offset"] for r in rows if r["partition"] == 0) == [8, 9]
    assert sorted(r["offset"] for r in rows if r["partition"] == 1) == list(range(10))


def test_ending_timestamp(spark: Any, kafka_cluster: KafkaBroker) -> None:
    require(kafka_cluster, Gap.OFFSETS_FOR_TIMES, Gap.OFFSETS_FOR_TIMES_EXPIRES)
    topic = _timestamped_topic(kafka_cluster)
    rows = reader(spark, kafka_cluster, subscribe=topic, endingTimestamp=str(BASE_MS + 6)).load().collect()
    assert sorted(int(r["timestamp"].timestamp() * 1000) - BASE_MS for r in rows) == [0, 1, 2, 3, 4, 5]


def test_starting_timestamp_without_match_fails_or_starts_latest(
    spark: Any, kafka_cluster: KafkaBroker
) -> None:
    require(kafka_cluster, Gap.OFFSETS_FOR_TIMES, Gap.OFFSETS_FOR_TIMES_EXPIRES)
    topic = _timestamped_topic(kafka_cluster)
    with pytest.raises(Exception, match="no offset of"):
        reader(spark, kafka_cluster, subscribe=topic, startingTimestamp=str(BASE_MS + 99)).load().collect()
    later = reader(
        spark,
        kafka_cluster,
        subscribe=topic,
        startingTimestamp=str(BASE_MS + 99),
        startingOffsetsByTimestampStrategy="latest",
    )
    assert later.load().count() == 0


def test_read_committed_skips_aborted_and_reaches_the_end(spark: Any, kafka_cluster: KafkaBroker) -> None:
    require(kafka_cluster, Gap.ABORTED_VISIBLE)
    topic = kafka_cluster.create_topic(1)
    committed, every = produce_transactions(kafka_cluster, topic)
    rows = reader(spark, kafka_cluster, subscribe=topic, **{"kafka.isolation.level": "read_committed"}).load()
    assert sorted(values_of(rows.collect())) == sorted(committed)
    uncommitted = reader(spark, kafka_cluster, subscribe=topic).load().collect()
    assert sorted(values_of(uncommitted)) == sorted(every)  # read_uncommitted (the default) sees aborted ones


def test_data_loss_fails_or_continues(spark: Any, kafka_cluster: KafkaBroker) -> None:
    require(kafka_cluster, Gap.DELETE_RECORDS)
    from confluent_kafka import TopicPartition

    topic = kafka_cluster.create_topic(1)
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(100)])
    admin = kafka_cluster.admin()
    for f in admin.delete_records([TopicPartition(topic, 0, 40)]).values():
        f.result(30)
    start = json.dumps({topic: {"0": 0}})
    # match=: any other failure (Spark's worker start limit on a loaded machine) surfaces whole
    with pytest.raises(Exception, match=rf"(?s)topic {re.escape(topic)} partition 0.*\[0, 40\)"):
        reader(spark, kafka_cluster, subscribe=topic, startingOffsets=start).load().collect()
    rows = reader(spark, kafka_cluster, subscribe=topic, startingOffsets=start, failOnDataLoss="false").load()
    assert sorted(r["offset"] for r in rows.collect()) == list(range(40, 100))


def test_user_schema_is_refused_with_the_fixed_columns(spark: Any, kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(1)
    kafka_cluster.produce(topic, [b"a"])
    with pytest.raises(Exception, match="fixed schema.*drop .schema.*key:binary,value:binary"):
        reader(spark, kafka_cluster, subscribe=topic).schema("value string").load().collect()
    # the same columns as the fixed schema are accepted (a schema copied from a previous read)
    fixed = reader(spark, kafka_cluster, subscribe=topic).load().schema
    assert [
        bytes(r["value"])
        for r in reader(spark, kafka_cluster, subscribe=topic).schema(fixed).load().collect()
    ] == [b"a"]


def test_a_batch_plan_opens_one_silent_kafka_client(reference_broker: KafkaBroker, monkeypatch: Any) -> None:
    """The driver's planning of a batch read (first contact, the enumerator's discovery and starting
    offsets, the planner's ending offsets) runs on one client, made with librdkafka's logging off;
    until 2026-11-30 it opened three, 10-20 ms apiece per query."""
    from confluent_kafka import admin

    from connector_base.spark.bridge import _BridgeBatchReader
    from connectors.kafka.datasource import KafkaDataSource, kafka_schema

    made: list[object] = []
    real_init = admin.AdminClient.__init__

    def counted_init(self: Any, conf: dict[str, Any], **kwargs: Any) -> None:  # a real client, counted
        made.append(conf.get("log_level"))
        real_init(self, conf, **kwargs)

    topic = reference_broker.create_topic(3)
    reference_broker.produce(topic, [f"v{i}".encode() for i in range(30)])
    monkeypatch.setattr(admin.AdminClient, "__init__", counted_init)  # the broker's own are not counted
    ds = KafkaDataSource(
        {
            "kafka.bootstrap.servers": reference_broker.bootstrap,
            "subscribe": topic,
            "startingOffsets": json.dumps({topic: {"0": 2, "1": -2, "2": -2}}),
        }
    )
    parts = _BridgeBatchReader(ds, kafka_schema(False)).partitions()
    assert parts and made == [0]
