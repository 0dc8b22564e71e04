"""Run by ``test_wheel_install.py`` with the Python of a fresh venv holding the installed wheel.

Starts a local Spark session and tries every shipped format: it prints one JSON line mapping each
format to ``{"ok": rows}`` or ``{"error": message}``. Files and sequence formats read real rows;
``kafka-unified`` reads a topic when a bootstrap address is given, otherwise loads without options.
It must not run from the source tree (the wheel, not the checkout, is under test).
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    data_dir, bootstrap, topic = sys.argv[1], sys.argv[2], sys.argv[3]
    from connector_base.spark import local_spark_session

    spark = local_spark_session("wheel-check", cores=1)
    spark.sparkContext.setLogLevel("ERROR")
    reads = {
        "files-unified": lambda: spark.read.format("files-unified")
        .option("path", data_dir)
        .option("format", "jsonl")
        .schema("id long, name string")
        .load(),
        "sequence-unified": lambda: spark.read.format("sequence-unified").option("partitions", "2").load(),
        "kafka-unified": (
            (
                lambda: spark.read.format("kafka-unified")
                .option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", topic)
                .load()
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
