"""Drop-in parity with Spark's ``kafka`` format, tried as a migrating user would (docs/kafka.md's table)."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from connectors.kafka.migration import starting_offsets_from_checkpoint
from integration_tests.connectors.kafka.helpers import (
    memory_query,
    read_back,
    reader,
    stream,
    values_of,
    wait_rows,
)
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.processes import free_port

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(240)]

FORMAT = "kafka-unified"


def _sink_options(broker: KafkaBroker) -> dict[str, str]:
    return {f"kafka.{k}": str(v) for k, v in broker.producer_defaults.items()}


def _java_murmur2_partition(key: bytes, partitions: int) -> int:
    """The partition the Java client's default partitioner picks for ``key`` (Kafka's Utils.murmur2)."""
    mask = 0xFFFFFFFF
    m = 0x5BD1E995
    h = (0x9747B28C ^ len(key)) & mask
    n4 = len(key) // 4
    for i in range(n4):
        k = int.from_bytes(key[i * 4 : i * 4 + 4], "little")
        k = (k * m) & mask
        k ^= k >> 24
        k = (k * m) & mask
        h = (h * m) & mask
        h ^= k
    tail = key[n4 * 4 :]
    if len(tail) >= 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if tail:
        h ^= tail[0]
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    return (h & 0x7FFFFFFF) % partitions


@pytest.mark.parametrize("starting", ["latest", "minus-one-json"])
def test_read_stream_starting_offsets_latest(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any, starting: str
) -> None:
    topic = kafka_cluster.create_topic(1)
    kafka_cluster.produce(topic, [b"old-0", b"old-1"], partition=0)
    value = json.dumps({topic: {"0": -1}}) if starting == "minus-one-json" else starting
    df = stream(spark, kafka_cluster, subscribe=topic, startingOffsets=value).load()
    query, table = memory_query(df, tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not query.recentProgress and time.monotonic() < deadline:  # the start offset is fixed
            time.sleep(0.2)
        kafka_cluster.produce(topic, [b"new-0", b"new-1"], partition=0)
        rows = wait_rows(spark, table, 2, query)
        assert sorted(values_of(rows)) == [b"new-0", b"new-1"]
    finally:
        query.stop()
    with pytest.raises(Exception, match="startingOffsets"):
        reader(spark, kafka_cluster, subscribe=topic, startingOffsets=value).load().count()


def test_sink_columns_in_another_case_are_refused_and_nothing_is_written(
    spark: Any, kafka_cluster: KafkaBroker
) -> None:
    topic = kafka_cluster.create_topic(1)
    df = spark.createDataFrame([("k", "v")], "Key string, Value string")
    with pytest.raises(Exception, match="withColumnRenamed"):
        df.write.format(FORMAT).mode("append").option(
            "kafka.bootstrap.servers", kafka_cluster.bootstrap
        ).option("topic", topic).save()
    assert kafka_cluster.end_offsets(topic) == {0: 0}


def test_save_modes_and_output_modes_as_spark_decides_them(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any
) -> None:
    """ErrorIfExists and Update are refused by Spark itself for every Python data source (DataFrameWriter
    and StreamExecution, before our code runs); append works. If Spark lifts them, this test says so."""
    topic = kafka_cluster.create_topic(1)
    df = spark.createDataFrame([("k", "v")], "key string, value string")
    writer = (
        df.write.format(FORMAT)
        .option("kafka.bootstrap.servers", kafka_cluster.bootstrap)
        .option("topic", topic)
    )
    writer = writer.options(**_sink_options(kafka_cluster))
    with pytest.raises(Exception, match="(?i)ErrorIfExists"):
        writer.save()
    writer.mode("append").save()
    assert kafka_cluster.end_offsets(topic) == {0: 1}
    with pytest.raises(Exception, match="Overwrite is not allowed for Kafka"):  # as Spark's Kafka sink
        writer.mode("overwrite").save()
    assert kafka_cluster.end_offsets(topic) == {0: 1}
    source = stream(spark, kafka_cluster, subscribe=topic, startingOffsets="earliest").load()
    update = (
        source.select("key", "value")
        .writeStream.format(FORMAT)
        .outputMode("update")
        .option("kafka.bootstrap.servers", kafka_cluster.bootstrap)
        .option("topic", topic)
        .option("checkpointLocation", os.path.join(str(tmp_path), "update"))
        .trigger(availableNow=True)
    )
    with pytest.raises(Exception, match="(?i)does not support Update mode"):
        q = update.start()
        try:
            q.awaitTermination(60)
        finally:
            q.stop()


def test_java_client_settings_carried_over_read_and_write(spark: Any, kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(3)
    keys = [f"user-{i}" for i in range(30)]
    df = spark.createDataFrame([(k, f"v-{k}") for k in keys], "key string, value string")
    df.write.format(FORMAT).mode("append").option("kafka.bootstrap.servers", kafka_cluster.bootstrap).options(
        **_sink_options(kafka_cluster)
    ).options(
        topic=topic,
        **{
            "kafka.max.request.size": "2097152",
            "kafka.buffer.memory": "33554432",
            "kafka.partitioner.class": "org.apache.kafka.clients.producer.internals.DefaultPartitioner",
            "kafka.send.buffer.bytes": "131072",
            "kafka.request.timeout.ms": "30000",
        },
    ).save()
    rows = read_back(
        spark,
        kafka_cluster,
        topic,
        len(keys),
        **{
            "kafka.fetch.max.wait.ms": "100",
            "kafka.max.poll.records": "10",
            "kafka.receive.buffer.bytes": "-1",
        },
    )
    assert sorted(bytes(r["key"]).decode() for r in rows) == sorted(keys)
    for r in rows:  # where Spark's Kafka sink (the Java producer) would have put each key
        assert r["partition"] == _java_murmur2_partition(bytes(r["key"]), 3)
    with pytest.raises(Exception, match="kafka.max.block.ms"):
        reader(spark, kafka_cluster, subscribe=topic, **{"kafka.max.block.ms": "1000"}).load()


def test_max_records_per_partition_splits_a_partition(spark: Any, kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(1)
    kafka_cluster.produce(topic, [b"%d" % i for i in range(100)], partition=0)
    df = reader(spark, kafka_cluster, subscribe=topic, maxRecordsPerPartition="30").load()
    assert df.rdd.getNumPartitions() == 4  # ceil(100 / 30) near-equal ranges, as Spark
    assert sorted(int(v) for v in values_of(df.collect())) == list(range(100))


def test_migration_from_a_checkpoint_written_by_spark(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any
) -> None:
    """Spark's own offset log (offsets/, commits/) around Kafka-shaped offsets, then kafka-unified resumes."""
    topic = kafka_cluster.create_topic(2)
    kafka_cluster.produce(topic, [b"a0", b"a1", b"a2"], partition=0)
    kafka_cluster.produce(topic, [b"b0", b"b1"], partition=1)
    checkpoint = os.path.join(str(tmp_path), "spark-kafka-query")
    _spark_checkpoint_with_offsets(spark, checkpoint, {topic: {"0": 2, "1": 1}})
    starting = starting_offsets_from_checkpoint(checkpoint)
    assert json.loads(starting) == {topic: {"0": 2, "1": 1}}
    rows = reader(spark, kafka_cluster, subscribe=topic, startingOffsets=starting).load().collect()
    assert sorted(values_of(rows)) == [b"a2", b"b1"]


def _spark_checkpoint_with_offsets(spark: Any, checkpoint: str, offsets: dict[str, dict[str, int]]) -> None:
    """Run a real Spark micro-batch whose source offset is Kafka's JSON shape, so Spark writes the log."""
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

    end = offsets

    class _Reader(DataSourceStreamReader):
        def initialOffset(self) -> dict[str, Any]:
            return {t: {p: 0 for p in ps} for t, ps in end.items()}

        def latestOffset(self) -> dict[str, Any]:
            return end

        def partitions(self, start: dict[str, Any], stop: dict[str, Any]) -> list[InputPartition]:
            return [InputPartition(0)]

        def read(self, partition: InputPartition) -> Iterator[tuple[int]]:
            yield (1,)

    class _KafkaShaped(DataSource):
        @classmethod
        def name(cls) -> str:
            return "kafka_shaped_offsets"

        def schema(self) -> str:
            return "x int"

        def streamReader(self, schema: Any) -> DataSourceStreamReader:
            return _Reader()

    spark.dataSource.register(_KafkaShaped)
    q = (
        spark.readStream.format("kafka_shaped_offsets")
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination(120)
    q.stop()


def _waited_s(error: BaseException) -> float:
    """The connector's own wait, from its message (Spark's overhead on a loaded machine is not ours)."""
    m = re.search(r"\(waited ([0-9.]+) s\)", str(error))
    assert m is not None, str(error)
    return float(m.group(1))


def test_unreachable_bootstrap_fails_fast_batch_and_streaming(spark: Any, tmp_path: Any) -> None:
    refused = f"127.0.0.1:{free_port()}"
    for servers in (refused, "no-such-host.invalid:9092"):
        with pytest.raises(Exception, match="cannot reach the Kafka cluster") as e:
            spark.read.format(FORMAT).option("kafka.bootstrap.servers", servers).option(
                "subscribe", "t"
            ).load().count()
        assert servers in str(e.value)
        assert _waited_s(e.value) < 10, "an unreachable cluster must fail in seconds"
    df = (
        spark.readStream.format(FORMAT)
        .option("kafka.bootstrap.servers", refused)
        .option("subscribe", "t")
        .load()
    )
    query, _table = memory_query(df, tmp_path)
    try:
        with pytest.raises(Exception, match="cannot reach the Kafka cluster") as e:
            query.awaitTermination(120)
    finally:
        query.stop()
    assert _waited_s(e.value) < 10


def test_min_offsets_per_trigger_does_not_delay_the_first_trigger(
    spark: Any, kafka_cluster: KafkaBroker, tmp_path: Any
) -> None:
    """As Spark's KafkaMicroBatchStream (its last trigger time starts at 0): the first trigger reads
    what there is; later ones wait for minOffsetsPerTrigger or maxTriggerDelay."""
    topic = kafka_cluster.create_topic(1)
    kafka_cluster.produce(topic, [b"x"] * 5, partition=0)
    df = stream(
        spark, kafka_cluster, subscribe=topic, startingOffsets="earliest", minOffsetsPerTrigger="20"
    ).load()
    query, table = memory_query(df, tmp_path)
    try:
        wait_rows(spark, table, 5, query, timeout_s=60)
        kafka_cluster.produce(topic, [b"y"] * 5, partition=0)
        time.sleep(3)
        assert spark.sql(f"select * from {table}").count() == 5, "a later trigger ran below the minimum"
    finally:
        query.stop()
