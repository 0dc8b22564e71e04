"""Which of spark-sql-kafka's resolved jars are passed as ``spark.jars`` (no Maven, no Spark)."""

from __future__ import annotations

from pathlib import Path

from sparkflow_testing.spark.kafka_source import not_shipped, pyspark_jar_names


def test_jars_pyspark_ships_are_left_out_at_any_version() -> None:
    resolved = [
        Path(name)
        for name in (
            "commons-pool2-2.13.1.jar",
            "hadoop-client-runtime-3.5.0.jar",
            "kafka-clients-3.9.2.jar",
            "scala-library-2.13.15.jar",
            "spark-sql-kafka-0-10_2.13-4.2.0.jar",
            "spark-tags_2.13-4.2.0.jar",
            "spark-token-provider-kafka-0-10_2.13-4.2.0.jar",
        )
    ]
    shipped = {"hadoop-client-runtime", "scala-library", "spark-tags_2.13", "commons-pool"}
    assert [p.name for p in not_shipped(resolved, shipped)] == [
        "commons-pool2-2.13.1.jar",
        "kafka-clients-3.9.2.jar",
        "spark-sql-kafka-0-10_2.13-4.2.0.jar",
        "spark-token-provider-kafka-0-10_2.13-4.2.0.jar",
    ]


def test_installed_pyspark_ships_spark_and_scala_but_not_kafka() -> None:
    shipped = pyspark_jar_names()
    assert {"spark-core_2.13", "spark-sql_2.13", "scala-library"} <= shipped
    assert not any(name.startswith(("kafka-clients", "spark-sql-kafka")) for name in shipped)
