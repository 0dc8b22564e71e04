"""Run by ``test_wheel_install.py`` with the Python of a fresh venv holding the installed wheel.

Starts a local Spark session and tries every shipped format: it prints one JSON line mapping each
format to ``{"ok": rows}`` or ``{"error": message}``. Files and sequence formats read real rows;
``kafka-unified`` reads a topic when a bootstrap address is given, otherwise loads without options.
It must not run from the source tree (the wheel, not the checkout, is under test).

``wheel_check.py --round-trip CONFIG`` instead writes ``ROUND_TRIP_ROWS`` rows with each format's
sink and reads them back with its source, on the brokers ``CONFIG`` (a JSON file) names: Kafka
(``kafka-unified``, once through the compiled writer and reader, once through the Python ones, each
on a topic of its own), Kinesis (``kinesis-unified``), Pravega (``pravega``) and files (Spark's JSON
writer, read by ``files-unified``). It prints ``RESULT`` with ``{"ok": sorted values read}`` or
``{"error": message}`` per format.
"""

from __future__ import annotations

import json
import sys
from typing import Any

ROUND_TRIP_ROWS = 50


def _sorted_strings(rows: list[Any], column: str) -> list[str]:
    return sorted(
        bytes(r[column]).decode() if isinstance(r[column], bytes | bytearray) else str(r[column])
        for r in rows
    )


def round_trip(config: dict[str, Any]) -> dict[str, dict[str, object]]:
    """Write ``ROUND_TRIP_ROWS`` rows per format and read them back."""
    from connector_base.spark import local_spark_session

    spark = local_spark_session("wheel-round-trip", cores=1)
    spark.sparkContext.setLogLevel("ERROR")
    values = [f"row-{i:03d}" for i in range(ROUND_TRIP_ROWS)]

    def kafka_through(client: str, topic: str) -> list[str]:
        """Write with ``kafka.writer=client`` and read back with ``kafka.reader=client``."""
        df = spark.createDataFrame(
            [(f"k{i % 5}", v) for i, v in enumerate(values)], "key string, value string"
        )
        common = {"kafka.bootstrap.servers": config["kafka_bootstrap"]}
        df.write.format("kafka-unified").options(**common).option("topic", topic).option(
            "kafka.writer", client
        ).mode("append").save()
        read = spark.read.format("kafka-unified").options(**common).option("subscribe", topic)
        return _sorted_strings(read.option("kafka.reader", client).load().collect(), "value")

    def kafka() -> list[str]:
        return kafka_through("native", config["kafka_topic"])

    def kafka_python() -> list[str]:
        return kafka_through("python", config["kafka_python_topic"])

    def kinesis() -> list[str]:
        options = config["kinesis_options"]
        df = spark.createDataFrame(
            [(v.encode(), f"k{i % 5}") for i, v in enumerate(values)], "data binary, partitionKey string"
        )
        df.write.format("kinesis-unified").options(**options).mode("append").save()
        read = spark.read.format("kinesis-unified").options(**options, startingPosition="TRIM_HORIZON")
        return _sorted_strings(read.load().collect(), "data")

    def pravega() -> list[str]:
        options = {
            "controller": config["pravega_controller"],
            "scope": config["pravega_scope"],
            "stream": config["pravega_stream"],
        }
        df = spark.createDataFrame(
            [(v, f"k{i % 5}") for i, v in enumerate(values)], "event string, routing_key string"
        )
        df.write.format("pravega").options(
            **options,
            allow_create_scope="true",
            allow_create_stream="true",
            segments="2",
            exactly_once="true",
        ).mode("append").save()
        return _sorted_strings(spark.read.format("pravega").options(**options).load().collect(), "event")

    def files() -> list[str]:
        df = spark.createDataFrame([(i, v) for i, v in enumerate(values)], "id long, name string")
        df.coalesce(1).write.mode("overwrite").json(config["files_dir"])
        read = spark.read.format("files-unified").option("path", config["files_dir"] + "/*.json")
        return _sorted_strings(
            read.option("format", "jsonl").schema("id long, name string").load().collect(), "name"
        )

    result: dict[str, dict[str, object]] = {}
    runs = (
        ("kafka", kafka),
        ("kafka-python", kafka_python),
        ("kinesis", kinesis),
        ("pravega", pravega),
        ("files", files),
    )
    for fmt, run in runs:
        try:
            result[fmt] = {"ok": run()}
        except Exception as e:  # the message is what the test shows
            result[fmt] = {"error": str(e)[:4000]}
    spark.stop()
    return result


def main() -> None:
    if sys.argv[1] == "--round-trip":
        with open(sys.argv[2]) as f:
            print("RESULT " + json.dumps(round_trip(json.load(f))), flush=True)
        return
    data_dir, bootstrap, topic = sys.argv[1], sys.argv[2], sys.argv[3]
    from connector_base.spark import local_spark_session

    spark = local_spark_session("wheel-check", cores=1)
    spark.sparkContext.setLogLevel("ERROR")
    reads = {
        "files-unified": lambda: (
            spark.read.format("files-unified")
            .option("path", data_dir)
            .option("format", "jsonl")
            .schema("id long, name string")
            .load()
        ),
        "sequence-unified": lambda: spark.read.format("sequence-unified").option("partitions", "2").load(),
        "kafka-unified": (
            (
                lambda: (
                    spark.read.format("kafka-unified")
                    .option("kafka.bootstrap.servers", bootstrap)
                    .option("subscribe", topic)
                    .load()
                )
            )
            if bootstrap
            else (lambda: spark.read.format("kafka-unified").load())
        ),
        "kinesis-unified": lambda: spark.read.format("kinesis-unified").load(),
        "pravega": lambda: spark.read.format("pravega").load(),
    }
    result: dict[str, dict[str, object]] = {}
    for fmt, load in reads.items():
        try:
            result[fmt] = {"ok": load().count()}
        except Exception as e:  # the message is what the test checks
            result[fmt] = {"error": str(e)[:4000]}
    spark.stop()
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
