"""What Spark's own ``format("kafka")`` does on the points of docs/kafka.md's parity table.

Not a test (it needs Spark's Kafka jars, resolved through Maven, and a second Spark session): run
``python -m integration_tests.connectors.kafka.spark_kafka_reference`` to print one line per point
from Spark's source and sink on a local noida-db broker. The table's "Spark" column was checked
with it (spark-sql-kafka-0-10 4.2.0 on pyspark 4.3.0).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from connector_base.spark import local_spark_session
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.kafka.brokers import start_broker
from sparkflow_testing.spark.kafka_source import served_version, spark_kafka_session_conf


def _first_line(e: BaseException) -> str:
    return str(e).splitlines()[0][:200]


def _try(label: str, call: Callable[[], str]) -> None:
    began = time.monotonic()
    try:
        print(f"{label}: accepted; {call()}", flush=True)
    except Exception as e:  # Spark's error is the observation
        print(f"{label}: refused after {time.monotonic() - began:.1f} s: {_first_line(e)}", flush=True)


def _observe(spark: Any, broker: KafkaBroker, scratch: str) -> None:
    bs = broker.bootstrap
    sink = broker.create_topic(1)

    def write(ddl: str, mode: str | None = None) -> Any:
        w = spark.createDataFrame([("k", "v")], ddl).write.format("kafka")
        w = w.mode(mode) if mode else w
        return w.option("kafka.bootstrap.servers", bs).option("topic", sink).save()

    def keys() -> str:
        rows = (
            spark.read.format("kafka").option("kafka.bootstrap.servers", bs).option("subscribe", sink).load()
        )
        return f"keys written: {[r['key'] for r in rows.collect()]}"

    _try("sink column 'Value'", lambda: str(write("key string, Value string")))
    _try("sink column 'Key', default save mode", lambda: (write("Key string, value string"), keys())[1])
    for mode in ("overwrite", "ignore"):
        _try(f"save mode {mode}", lambda mode=mode: str(write("key string, value string", mode)))

    source = broker.create_topic(1)
    broker.produce(source, [b"x"] * 5, partition=0)

    def update_mode() -> str:
        q = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", bs)
            .option("subscribe", source)
            .option("startingOffsets", "earliest")
            .load()
            .select("key", "value")
            .writeStream.format("kafka")
            .outputMode("update")
            .option("kafka.bootstrap.servers", bs)
            .option("topic", sink)
            .option("checkpointLocation", os.path.join(scratch, "update"))
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination(300)
        return f"exception: {q.exception()}"

    _try("writeStream outputMode update", update_mode)

    def first_trigger() -> str:
        q = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", bs)
            .option("subscribe", source)
            .option("startingOffsets", "earliest")
            .option("minOffsetsPerTrigger", "20")
            .load()
            .writeStream.format("memory")
            .queryName("first_trigger")
            .option("checkpointLocation", os.path.join(scratch, "first"))
            .trigger(processingTime="500 milliseconds")
            .start()
        )
        began = time.monotonic()
        try:
            while time.monotonic() - began < 120:
                n = spark.sql("select * from first_trigger").count()
                if n:
                    return f"{n} of 5 records (minimum 20) read {time.monotonic() - began:.1f} s after start"
                time.sleep(0.5)
            return "nothing read in 120 s"
        finally:
            q.stop()

    _try("minOffsetsPerTrigger=20 on the first trigger", first_trigger)

    def read(**options: str) -> str:
        df = spark.read.format("kafka").option("subscribe", source).options(**options)
        return f"count {df.load().count()}"

    _try(
        "unknown option and unknown kafka.* setting",
        lambda: read(
            **{"kafka.bootstrap.servers": bs, "startingOffset": "latest", "kafka.no.such.setting": "1"}
        ),
    )
    _try(
        "batch startingOffsets=latest",
        lambda: read(**{"kafka.bootstrap.servers": bs, "startingOffsets": "latest"}),
    )
    _try(
        "batch read of a bad host name",
        lambda: read(**{"kafka.bootstrap.servers": "no-such-host.invalid:9092"}),
    )


def main() -> None:
    """Start a broker and a Spark session with Spark's Kafka jars; print the observations."""
    broker = start_broker("noida-db")
    try:
        print(f"spark-sql-kafka-0-10 {served_version()}", flush=True)
        spark = local_spark_session("spark-kafka-reference", cores=1, **spark_kafka_session_conf())
        spark.sparkContext.setLogLevel("ERROR")
        try:
            with tempfile.TemporaryDirectory() as scratch:
                _observe(spark, broker, scratch)
        finally:
            spark.stop()
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
