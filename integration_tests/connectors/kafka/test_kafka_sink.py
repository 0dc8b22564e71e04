"""The sink: ``df.write`` / ``writeStream`` ``.format("kafka-unified")``."""

from __future__ import annotations

import os
from typing import Any

import pytest

from integration_tests.connectors.kafka.helpers import read_back, stream, values_of
from sparkflow_testing.kafka.broker import KafkaBroker

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(240)]


def _producer_options(broker: KafkaBroker) -> dict[str, str]:
    """The broker's producer workarounds as sink options (tansu: one record per produce request)."""
    return {f"kafka.{k}": str(v) for k, v in broker.producer_defaults.items()}


def _writer(df: Any, broker: KafkaBroker, **options: str) -> Any:
    return (
        df.write.format("kafka-unified")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .options(**_producer_options(broker))
        .options(**options)
    )


def test_batch_write_with_key_partition_and_headers(spark: Any, kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(2)
    df = spark.sql(
        "select cast(concat('k', id) as binary) as key, concat('v', id) as value, cast(id % 2 as int) as partition, "  # noqa: E501
        "array(named_struct('key', 'n', 'value', cast(cast(id as string) as binary))) as headers "
        "from range(100)"
    )
    _writer(df, kafka_cluster, topic=topic).mode("append").save()
    rows = read_back(spark, kafka_cluster, topic, includeHeaders="true")
    assert sorted(values_of(rows)) == sorted(f"v{i}".encode() for i in range(100))
    for r in rows:
        i = int(bytes(r["value"])[1:])
        assert bytes(r["key"]) == f"k{i}".encode() and r["partition"] == i % 2
        assert [(h["key"], bytes(h["value"])) for h in r["headers"]] == [("n", str(i).encode())]


def test_topic_column_routes_rows(spark: Any, kafka_cluster: KafkaBroker) -> None:
    a, b = kafka_cluster.create_topic(1), kafka_cluster.create_topic(1)
    df = spark.createDataFrame([(a, "x"), (b, "y"), (a, "z")], "topic string, value string")
    _writer(df, kafka_cluster).mode("append").save()
    assert sorted(values_of(read_back(spark, kafka_cluster, a))) == [b"x", b"z"]
    assert values_of(read_back(spark, kafka_cluster, b)) == [b"y"]


def test_stream_write_copies_a_topic(spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any) -> None:
    src, dst = kafka_cluster.create_topic(2), kafka_cluster.create_topic(2)
    kafka_cluster.produce(src, [f"v{i}".encode() for i in range(200)])
    q = (
        stream(spark, kafka_cluster, subscribe=src, startingOffsets="earliest")
        .load()
        .selectExpr("key", "value")
        .writeStream.format("kafka-unified")
        .option("kafka.bootstrap.servers", kafka_cluster.bootstrap)
        .option("topic", dst)
        .options(**_producer_options(kafka_cluster))
        .option("checkpointLocation", os.path.join(str(tmp_path), "chk"))
        .trigger(availableNow=True)
        .start()
    )
    assert q.awaitTermination(180) and q.exception() is None
    assert sorted(values_of(read_back(spark, kafka_cluster, dst))) == sorted(
        f"v{i}".encode() for i in range(200)
    )


def test_failed_delivery_fails_the_task_with_the_reason(spark: Any, kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(1)
    df = spark.sql("select 'x' as value, 7 as partition")
    with pytest.raises(Exception, match="(?i)unknown partition"):
        _writer(df, kafka_cluster, topic=topic).mode("append").save()


def test_value_column_is_required_and_topic_must_be_known(spark: Any, kafka_cluster: KafkaBroker) -> None:
    with pytest.raises(Exception, match="'value' column"):
        _writer(spark.sql("select 'k' as key"), kafka_cluster, topic="t").mode("append").save()
    with pytest.raises(Exception, match="'topic'"):
        _writer(spark.sql("select 'v' as value"), kafka_cluster).mode("append").save()
    with pytest.raises(Exception, match="kafka.value.serializer"):
        _writer(
            spark.sql("select 'v' as value"), kafka_cluster, topic="t", **{"kafka.value.serializer": "x"}
        ).mode("append").save()
