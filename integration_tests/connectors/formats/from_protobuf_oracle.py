"""Spark's own ``from_protobuf`` (spark-protobuf from Maven Central) as an oracle, run in a child process.

``python -m integration_tests.connectors.formats.from_protobuf_oracle`` reads JSON cases from stdin
(``[{"descriptor_set": <hex FileDescriptorSet>, "message": <full name>, "payloads": [<hex>, ...]}]``),
decodes each with ``from_protobuf(value, message, binaryDescriptorSet=...)`` in a ``local[1]``
session that has spark-protobuf on its classpath, and writes one JSON line per case as
``from_avro_oracle`` does (the Spark type of ``v``, the column as a base64 Arrow IPC stream).
"""

from __future__ import annotations

from typing import Any

from integration_tests.connectors.formats.from_avro_oracle import serve_cases
from sparkflow_testing.maven import resolve_classpath
from sparkflow_testing.spark.kafka_source import NEWEST_SERVED, SCALA_BINARY, not_shipped, pyspark_jar_names

SPARK_PROTOBUF = f"org.apache.spark:spark-protobuf_{SCALA_BINARY}:{NEWEST_SERVED}"
"""Served by Maven Central at the version spark-avro is (its protobuf-java is shaded inside)."""


def spark_protobuf_jars() -> list[str]:
    """spark-protobuf and what it needs beyond pyspark's own jars."""
    libs = resolve_classpath(f"spark-protobuf-{NEWEST_SERVED}", [SPARK_PROTOBUF])
    return [str(p) for p in not_shipped(libs.glob("*.jar"), pyspark_jar_names())]


def main() -> None:
    """Decode the cases on stdin with Spark's from_protobuf."""
    from pyspark.sql.protobuf.functions import from_protobuf

    def decode(df: Any, case: dict[str, Any]) -> Any:
        desc = bytes.fromhex(case["descriptor_set"])
        return df.select(from_protobuf("value", case["message"], binaryDescriptorSet=desc).alias("v"))

    serve_cases(spark_protobuf_jars(), decode)


if __name__ == "__main__":
    main()
