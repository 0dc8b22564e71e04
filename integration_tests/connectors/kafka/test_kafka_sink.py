"""The sink: ``df.write`` / ``writeStream`` ``.format("kafka-unified")``.

Every test runs on the producing path ``SPARKFLOW_KAFKA_WRITER`` chooses (``make test`` runs them on
both, ``native`` and ``python``); ``test_both_writers_produce_the_same_records`` compares the two
directly on the shapes where a compiled path could differ.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from connector_base.testing.driver_process import DriverProcess
from connectors.kafka.reader_choice import native_module
from integration_tests.connectors.kafka.helpers import read_back, stream, values_of
from sparkflow_testing.kafka.broker import KafkaBroker

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(240)]

DRIVER = Path(__file__).resolve().parents[2] / "connector_base" / "kill_driver.py"


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
    rows = read_back(spark, kafka_cluster, topic, 100, includeHeaders="true")
    assert sorted(values_of(rows)) == sorted(f"v{i}".encode() for i in range(100))
    for r in rows:
        i = int(bytes(r["value"])[1:])
        assert bytes(r["key"]) == f"k{i}".encode() and r["partition"] == i % 2
        assert [(h["key"], bytes(h["value"])) for h in r["headers"]] == [("n", str(i).encode())]


def test_topic_column_routes_rows(spark: Any, kafka_cluster: KafkaBroker) -> None:
    a, b = kafka_cluster.create_topic(1), kafka_cluster.create_topic(1)
    df = spark.createDataFrame([(a, "x"), (b, "y"), (a, "z")], "topic string, value string")
    _writer(df, kafka_cluster).mode("append").save()
    assert sorted(values_of(read_back(spark, kafka_cluster, a, 2))) == [b"x", b"z"]
    assert values_of(read_back(spark, kafka_cluster, b, 1)) == [b"y"]


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
    assert sorted(values_of(read_back(spark, kafka_cluster, dst, 200))) == sorted(
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


def test_a_row_without_a_topic_fails_naming_the_row(spark: Any, kafka_cluster: KafkaBroker) -> None:
    a = kafka_cluster.create_topic(1)
    df = spark.createDataFrame([(a, "x"), (None, "y")], "topic string, value string").coalesce(1)
    with pytest.raises(Exception, match="row 1 has a null topic and the 'topic' option is not set"):
        _writer(df, kafka_cluster).mode("append").save()


_SHAPES = """
select
  case when id % 5 = 0 then null else cast(concat('k', id) as binary) end as key,
  case when id % 7 = 0 then null else concat('v', id) end as value,
  case when id % 5 = 0 then cast(id % 3 as int) end as partition,
  case id % 4
    when 0 then null
    when 1 then array()
    when 2 then array(named_struct('key', 'a', 'value', cast('1' as binary)),
                      named_struct('key', 'a', 'value', cast(null as binary)))
    else array(named_struct('key', 'b', 'value', cast(cast(id as string) as binary)))
  end as headers
from range(0, 400, 1, 1)
"""


@pytest.mark.skipif(
    not hasattr(native_module(), "NativeProducer"), reason="the kafka-native wheel is missing (make native)"
)
def test_both_writers_produce_the_same_records(spark: Any, kafka_cluster: KafkaBroker) -> None:
    """Null keys and values; headers none, empty, duplicated, null-valued; explicit and murmur2 partitions."""
    df = spark.sql(_SHAPES)
    written = {}
    for writer in ("native", "python"):
        topic = kafka_cluster.create_topic(3)
        _writer(df, kafka_cluster, topic=topic, **{"kafka.writer": writer}).mode("append").save()
        rows = read_back(spark, kafka_cluster, topic, 400, includeHeaders="true")
        written[writer] = sorted(
            (
                r["partition"],
                r["offset"],
                None if r["key"] is None else bytes(r["key"]),
                None if r["value"] is None else bytes(r["value"]),
                None if r["headers"] is None else [(h["key"], h["value"]) for h in r["headers"]],
            )
            for r in rows
        )
    assert len(written["python"]) == 400
    assert written["native"] == written["python"]


@pytest.mark.timeout(900)
def test_query_killed_while_writing_restarts_with_nothing_lost(
    spark: Any, reference_broker: KafkaBroker, tmp_path: Path
) -> None:
    """SIGKILL the driver (JVM and Python workers) mid-write; restarted from the checkpoint: at least once."""
    src, dst = reference_broker.create_topic(3), reference_broker.create_topic(3)
    reference_broker.produce(src, [f"r{i}".encode() for i in range(2000)])
    source = {
        "kafka.bootstrap.servers": reference_broker.bootstrap,
        "subscribe": src,
        "startingOffsets": "earliest",
        "maxOffsetsPerTrigger": "400",
    }
    sink = {"kafka.bootstrap.servers": reference_broker.bootstrap, "topic": dst}
    args = [
        "kafka-unified",
        str(tmp_path / "chk"),
        str(tmp_path / "unused"),
        json.dumps(source),
        "--columns",
        "value",
        "--sink",
        "kafka-unified",
        "--sink-options",
        json.dumps(sink),
    ]

    def written() -> int:
        return sum(reference_broker.end_offsets(dst).values())

    driver = DriverProcess(DRIVER, [*args, "--trigger-ms", "100"])
    driver.wait_for(lambda: written() > 0)  # the first batch is writing (or just wrote)
    driver.kill()
    at_kill = written()
    assert at_kill < 2000, "the query was done before the kill: nothing was interrupted"
    reference_broker.produce(src, [f"r{i}".encode() for i in range(2000, 2500)])
    driver = DriverProcess(DRIVER, args)  # AvailableNow from the checkpoint, to the end of the data
    assert driver.finish(600), "the restarted query failed"
    values = values_of(read_back(spark, reference_broker, dst))
    assert set(values) == {f"r{i}".encode() for i in range(2500)}, "records lost"
    assert len(values) >= 2500


def _writers() -> list[str]:
    native = hasattr(native_module(), "NativeProducer")
    return ["native", "python"] if native else ["python"]


@pytest.mark.parametrize("writer", _writers())
def test_producers_are_pooled_between_tasks_and_a_failed_one_is_closed(
    kafka_cluster: KafkaBroker, writer: str
) -> None:
    """As Spark's ``CachedKafkaProducer``: a worker's next task sends with the producer its last task
    used; a producer whose task failed is closed, and the next task gets a new one that works."""
    import pyarrow as pa

    from connectors.kafka import producer_pool
    from connectors.kafka.native_sink import produce_batches_native
    from connectors.kafka.python_sink import produce_batches
    from connectors.kafka.sink_options import KafkaSinkOptions

    produce = produce_batches_native if writer == "native" else produce_batches
    topic = kafka_cluster.create_topic(2)
    options = KafkaSinkOptions.parse(
        {
            "kafka.bootstrap.servers": kafka_cluster.bootstrap,
            "topic": topic,
            "kafka.writer": writer,
            **_producer_options(kafka_cluster),
        }
    )
    rows = pa.record_batch({"value": pa.array([b"a", b"b", b"c"])})
    producer_pool.close_idle()
    assert produce(options, iter([rows])) == 3
    created, idle = producer_pool.pool_size()
    assert idle == 1
    for _ in range(3):
        assert produce(options, iter([rows])) == 3
    assert producer_pool.pool_size() == (created, 1)  # every task found the pooled producer

    bad = pa.record_batch({"value": pa.array([b"x"]), "partition": pa.array([7], pa.int32())})
    with pytest.raises(Exception, match="(?i)unknown partition"):
        produce(options, iter([bad]))
    assert producer_pool.pool_size() == (created, 0)  # the failed task's producer was closed
    assert produce(options, iter([rows])) == 3
    assert producer_pool.pool_size() == (created + 1, 1)
    assert sum(kafka_cluster.end_offsets(topic).values()) == 15
    producer_pool.close_idle()
