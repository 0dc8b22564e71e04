"""A Spark driver for the secrets test, with Spark's event log on: every mechanism once, and a failure.

    python secure_driver.py CONFIG_JSON

Writes ``OUT/events`` (the event log), ``OUT/checkpoint``, ``OUT/progress.json`` (every
``lastProgress``) and ``OUT/errors.txt`` (the text of a failed read with a wrong password).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(
    0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
)


def main() -> None:
    """Run the reads, the stream and the write."""
    from connector_base.spark import local_spark_session
    from integration_tests.connectors.kafka.security import client_options
    from sparkflow_testing.kafka.apache_kafka import KafkaSecurity

    config = json.loads(Path(sys.argv[1]).read_text())
    out = Path(config["out"])
    fields = config["security"]
    paths = {k: Path(v) for k, v in fields.items() if k not in _STRINGS}
    security = KafkaSecurity(**{k: v for k, v in fields.items() if k in _STRINGS}, **paths)  # type: ignore[arg-type]
    listeners, topic = config["listeners"], config["topic"]
    (out / "events").mkdir()
    spark = local_spark_session(
        "kafka-secrets-test",
        cores=2,
        spark__eventLog__enabled="true",
        spark__eventLog__dir=(out / "events").as_uri(),
    )
    spark.sparkContext.setLogLevel("INFO")  # the driver log is searched too: let it say a lot
    fmt = "kafka-unified"
    for mechanism in ("PLAIN", "SSL-JKS"):
        options = client_options(security, listeners, mechanism)
        assert spark.read.format(fmt).options(**options).option("subscribe", topic).load().count() == 30
    options = client_options(security, listeners, "SCRAM-SHA-512")
    stream = (
        spark.readStream.format(fmt)
        .options(**options)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "10")
        .load()
    )
    query = (
        stream.writeStream.format("noop")
        .option("checkpointLocation", str(out / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    assert query.exception() is None, query.exception()
    progress = [*query.recentProgress, query.lastProgress]
    (out / "progress.json").write_text("\n".join(p.json for p in progress if p is not None))
    frame = spark.createDataFrame([(b"w",)], "value binary")
    scram = client_options(security, listeners, "SCRAM-SHA-256")
    frame.write.format(fmt).options(**scram).option("topic", topic).mode("append").save()
    wrong = client_options(security, listeners, "PLAIN", password=config["wrong"])
    try:
        spark.read.format(fmt).options(**wrong).option("subscribe", topic).load().collect()
        raise SystemExit("a wrong password was accepted")
    except Exception as e:  # the failure itself is what is checked
        (out / "errors.txt").write_text(f"{type(e).__name__}: {e}")
    spark.stop()


_STRINGS = {"plain_user", "plain_password", "scram_user", "scram_password", "store_password"}

if __name__ == "__main__":
    main()
