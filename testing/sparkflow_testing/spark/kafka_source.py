"""Spark's own Kafka source (``format("kafka")``) as a reference: its jars, resolved through Maven.

``spark_kafka_jars(version)`` resolves ``org.apache.spark:spark-sql-kafka-0-10_2.13:<version>`` with
``sparkflow_testing.maven`` (exact versions, cached per machine) and returns the jars to pass as
``spark.jars``: the Kafka source and what it needs at run time (``kafka-clients``, ``commons-pool2``,
the token provider), without any jar that pyspark already ships (Spark's own modules, Scala, Hadoop,
compression and logging libraries, at whatever version), so no class is on the classpath twice.

Maven Central does not serve every Spark release's Kafka module: ``served_version(pyspark_version)``
is the installed version when it is served, else ``NEWEST_SERVED`` (a pinned, tried version).

    from sparkflow_testing.spark.kafka_source import spark_kafka_session_conf
    spark = local_spark_session("ref", **spark_kafka_session_conf())
    spark.read.format("kafka").option("kafka.bootstrap.servers", ...).load()
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from sparkflow_testing.maven import MavenError, resolve_classpath

__all__ = [
    "NEWEST_SERVED",
    "SCALA_BINARY",
    "not_shipped",
    "pyspark_jar_names",
    "served_version",
    "spark_kafka_jars",
    "spark_kafka_session_conf",
]

SCALA_BINARY = "2.13"
NEWEST_SERVED = "4.2.0"
"""The newest ``spark-sql-kafka-0-10_2.13`` that resolved from Maven Central (4.3.0 is not served)."""

_JAR = re.compile(r"^(?P<name>.+?)-(?P<version>\d[\w.\-]*)\.jar$")


def _artifact(jar: str) -> str:
    m = _JAR.match(jar)
    return m["name"] if m else jar.removesuffix(".jar")


def _pyspark_jars_dir() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def pyspark_jar_names() -> set[str]:
    """Artifact names (without version) of the jars the installed pyspark ships."""
    return {_artifact(p.name) for p in _pyspark_jars_dir().glob("*.jar")}


def not_shipped(jars: Iterable[Path], shipped: set[str]) -> list[Path]:
    """``jars`` whose artifact (the file name without its version) is not in ``shipped``."""
    return sorted(p for p in jars if _artifact(p.name) not in shipped)


def spark_kafka_jars(version: str) -> list[Path]:
    """The jars of Spark's Kafka source ``version`` that pyspark does not already ship."""
    libs = resolve_classpath(
        f"spark-sql-kafka-{version}", [f"org.apache.spark:spark-sql-kafka-0-10_{SCALA_BINARY}:{version}"]
    )
    jars = not_shipped(libs.glob("*.jar"), pyspark_jar_names())
    if not any(p.name.startswith("spark-sql-kafka-0-10") for p in jars):
        raise MavenError(f"spark-sql-kafka-0-10 {version}: the resolved classpath {libs} has no source jar")
    return jars


def served_version(pyspark_version: str | None = None) -> str:
    """``pyspark_version`` (default: installed) if Maven serves its Kafka module, else ``NEWEST_SERVED``."""
    if pyspark_version is None:
        import pyspark

        pyspark_version = pyspark.__version__
    try:
        spark_kafka_jars(pyspark_version)
    except MavenError:
        return NEWEST_SERVED
    return pyspark_version


def spark_kafka_session_conf(version: str | None = None) -> dict[str, str]:
    """``local_spark_session`` keyword settings that put Spark's Kafka source ``version`` on the classpath."""
    jars = spark_kafka_jars(version or served_version())
    return {"spark__jars": ",".join(str(p) for p in jars)}
