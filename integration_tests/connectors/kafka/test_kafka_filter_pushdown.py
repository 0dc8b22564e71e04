"""Filter pushdown (``filterPushdown=true``) on batch reads: fewer records read, the same rows.

Records read are counted twice: as planned on the driver (the offset ranges executors read exactly)
and as Spark's scan saw them (``numOutputRows`` of the data source scan, before Spark's own filter).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql.datasource import EqualTo, GreaterThan, GreaterThanOrEqual, In, LessThan

from connector_base.errors import InvalidOptionError
from connectors.kafka.datasource import KafkaDataSource, kafka_schema
from connectors.kafka.split import KafkaPartitionSplit
from integration_tests.connectors.kafka.conftest import require
from integration_tests.connectors.kafka.helpers import reader
from sparkflow_testing.kafka.broker import Gap, KafkaBroker

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(240)]

CONF = "spark.sql.python.filterPushdown.enabled"


@pytest.fixture
def pushdown_conf(spark: Any) -> Iterator[Any]:
    before = spark.conf.get(CONF, "false")
    spark.conf.set(CONF, "true")
    yield spark
    spark.conf.set(CONF, before)


def planned_records(broker: KafkaBroker, filters: list[Any], **options: str) -> int:
    """Records the driver plans for a pushed-down read (what executors fetch from the broker)."""
    ds = KafkaDataSource({"kafka.bootstrap.servers": broker.bootstrap, "filterPushdown": "true", **options})
    r = ds.reader(kafka_schema(False))
    r.pushFilters(filters)
    serializer = ds.create_source(kafka_schema(False), False).split_serializer
    splits: list[KafkaPartitionSplit] = [serializer.loads(s) for p in r.partitions() for s in p.splits]
    return sum(s.stopping_offset - s.starting_offset for s in splits)


def scanned_rows(df: Any) -> int:
    """``numOutputRows`` of the Python data source scan of an executed ``df``."""
    plan = df._jdf.queryExecution().executedPlan()
    found = []

    def walk(node: Any) -> None:
        if "Python" in node.nodeName() or "BatchScan" in node.nodeName():
            metrics = node.metrics()
            if metrics.contains("numOutputRows"):
                found.append(int(metrics.apply("numOutputRows").value()))
        children = node.children()
        for i in range(children.size()):
            walk(children.apply(i))
        inner = node.innerChildren()
        for i in range(inner.size()):
            walk(inner.apply(i))

    walk(plan)
    assert found, f"no scan metrics in {plan}"
    return found[0]


def rows(df: Any) -> list[tuple[int, int, bytes]]:
    return sorted((r["partition"], r["offset"], bytes(r["value"])) for r in df.collect())


def test_partition_and_offset_filters_read_only_their_ranges(
    pushdown_conf: Any, kafka_cluster: KafkaBroker
) -> None:
    spark = pushdown_conf
    topic = kafka_cluster.create_topic(4)
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(400)])
    where = "partition IN (1, 2) AND offset >= 10 AND offset < 30"
    pushed = reader(spark, kafka_cluster, subscribe=topic, filterPushdown="true").load().where(where)
    plain = reader(spark, kafka_cluster, subscribe=topic).load().where(where)
    expected = rows(plain)
    assert len(expected) == 40
    assert rows(pushed) == expected
    assert scanned_rows(pushed) == 40
    assert scanned_rows(plain) == 400
    # topic equality and IN, planned on the driver
    assert planned_records(kafka_cluster, [EqualTo(("topic",), topic)], subscribe=topic) == 400
    assert planned_records(kafka_cluster, [EqualTo(("topic",), "other")], subscribe=topic) == 0
    assert planned_records(kafka_cluster, [In(("partition",), (0, 3))], subscribe=topic) == 200


def test_timestamp_filter_narrows_by_offsets_for_times(
    pushdown_conf: Any, kafka_cluster: KafkaBroker
) -> None:
    require(kafka_cluster, Gap.OFFSETS_FOR_TIMES, Gap.OFFSETS_FOR_TIMES_EXPIRES)
    spark = pushdown_conf
    topic = kafka_cluster.create_topic(2)
    base = 1_700_000_000_000
    stamps = [base + i for i in range(1000)]  # CreateTime, one ms apart, round-robin over partitions
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(1000)], timestamps=stamps)
    lo = dt.datetime.fromtimestamp((base + 900) / 1000, tz=dt.UTC)
    where = f"timestamp >= '{lo.strftime('%Y-%m-%d %H:%M:%S.%f')}+00:00'"
    pushed = reader(spark, kafka_cluster, subscribe=topic, filterPushdown="true").load().where(where)
    plain = reader(spark, kafka_cluster, subscribe=topic).load().where(where)
    expected = rows(plain)
    assert len(expected) == 100
    assert rows(pushed) == expected
    assert scanned_rows(pushed) == 100
    assert planned_records(kafka_cluster, [GreaterThanOrEqual(("timestamp",), lo)], subscribe=topic) == 100
    assert planned_records(kafka_cluster, [GreaterThan(("timestamp",), lo)], subscribe=topic) == 99
    # CreateTime: an upper bound cannot end a partition early (a later record may be older)
    assert planned_records(kafka_cluster, [LessThan(("timestamp",), lo)], subscribe=topic) == 1000


def test_one_percent_by_log_append_time_reads_at_most_two_percent(
    pushdown_conf: Any, reference_broker: KafkaBroker
) -> None:
    spark = pushdown_conf
    broker = reference_broker
    require(broker, Gap.OFFSETS_FOR_TIMES, Gap.OFFSETS_FOR_TIMES_EXPIRES)
    topic = broker.create_topic(4, **{"message.timestamp.type": "LogAppendTime"})
    for chunk in range(100):
        broker.produce(topic, [f"c{chunk}-{i}".encode() for i in range(40)])
        time.sleep(0.003)
    everything = reader(spark, broker, subscribe=topic).load()
    stamps = sorted({r["timestamp"] for r in everything.select("timestamp").collect()})
    # the 1% of records around the middle chunk: from its first timestamp to the next chunk's
    middle = everything.where("value LIKE 'c50-%'").selectExpr("min(timestamp) m", "max(timestamp) x").first()
    later = [s for s in stamps if s > middle["x"]]
    assert later, "chunks must have distinct append times"
    lo, hi = middle["m"], later[0]
    window = everything.where((everything.timestamp >= lo) & (everything.timestamp < hi))
    expected = rows(window)
    assert 40 <= len(expected) <= 80  # a chunk may share a millisecond with its neighbour
    df = reader(spark, broker, subscribe=topic, filterPushdown="true").load()
    pushed = df.where((df.timestamp >= lo) & (df.timestamp < hi))
    assert rows(pushed) == expected
    read = scanned_rows(pushed)
    assert read <= 0.02 * 4000, f"read {read} of 4000 records for {len(expected)} matches"
    lo_utc, hi_utc = (t.astimezone(dt.UTC) for t in (lo, hi))
    bounds = [GreaterThanOrEqual(("timestamp",), lo_utc), LessThan(("timestamp",), hi_utc)]
    planned = planned_records(broker, bounds, subscribe=topic)
    assert planned == read


def test_pushdown_is_off_unless_asked(spark: Any, kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(1)
    kafka_cluster.produce(topic, [b"a", b"b"])
    # without filterPushdown the conf may stay off (Spark refuses a pushdown reader then)
    assert len(reader(spark, kafka_cluster, subscribe=topic).load().where("offset > 0").collect()) == 1
    with pytest.raises(Exception, match="filterPushdown"):  # at load(), before any plan
        reader(spark, kafka_cluster, subscribe=topic, filterPushdown="maybe").load()
    options = {"kafka.bootstrap.servers": kafka_cluster.bootstrap, "subscribe": topic}
    with pytest.raises(InvalidOptionError, match="filterPushdown"):
        KafkaDataSource({**options, "filterPushdown": "yes"}).reader(kafka_schema(False))
