"""Spark's own ``from_protobuf`` (spark-protobuf from Maven Central) as an oracle, run in a child process.

``python -m integration_tests.connectors.formats.from_protobuf_oracle`` reads JSON cases from stdin
(``[{"descriptor_set": <hex FileDescriptorSet>, "message": <full name>, "payloads": [<hex>, ...]}]``),
decodes each with ``from_protobuf(value, message, binaryDescriptorSet=...)`` in a ``local[1]``
session that has spark-protobuf on its classpath, and writes one JSON line per case as
``from_avro_oracle`` does (the Spark type of ``v``, the column as a base64 Arrow IPC stream).

Where the Maven repository serves no spark-protobuf (the mirror these machines reach), a build of it
can be named instead: ``SPARKFLOW_SPARK_PROTOBUF_JARS`` lists its jar and protobuf-java's, separated
by ``os.pathsep``; ``tools/build_spark_protobuf.sh`` compiles Apache Spark's ``connector/protobuf``
module from a Spark source checkout into such a pair. The test and the benchmark that use this
module then run against it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from integration_tests.connectors.formats.from_avro_oracle import serve_cases
from sparkflow_testing.maven import resolve_classpath
from sparkflow_testing.spark.kafka_source import NEWEST_SERVED, SCALA_BINARY, not_shipped, pyspark_jar_names

SPARK_PROTOBUF = f"org.apache.spark:spark-protobuf_{SCALA_BINARY}:{NEWEST_SERVED}"
"""Served by Maven Central at the version spark-avro is (its protobuf-java is shaded inside)."""

JARS_ENV = "SPARKFLOW_SPARK_PROTOBUF_JARS"
"""A local build of spark-protobuf (and the protobuf-java it was compiled against), when set."""


def spark_protobuf_jars() -> list[str]:
    """spark-protobuf and what it needs beyond pyspark's own jars (``JARS_ENV``'s, when it is set)."""
    named = [p for p in os.environ.get(JARS_ENV, "").split(os.pathsep) if p.strip()]
    if named:
        missing = [p for p in named if not Path(p).is_file()]
        if missing:
            raise FileNotFoundError(f"{JARS_ENV} names jars that do not exist: {', '.join(missing)}")
        return named
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
