"""Fixtures of the differential tests: the shared Spark session with Spark's Kafka jars, real Kafka.

Spark's own Kafka source joins the shared ``spark`` session through ``ADD JAR`` (the jars that
``sparkflow_testing.spark.kafka_source`` resolves from Maven), so both formats run in one session and
no second JVM is started. The differential tests run on real Apache Kafka only: they compare two
clients of one broker, and a stand-in's gaps would be differences of the broker, not of the sources.
"""

from __future__ import annotations

from typing import Any

import pytest

from integration_tests.connectors.kafka.differential.topics import TopicStore
from sparkflow_testing.kafka.broker import KafkaBroker

_JARS_ADDED: list[str] = []


@pytest.fixture(scope="session")
def spark_with_kafka_jars(spark: Any) -> Any:
    """The shared session, able to read and write ``format("kafka")`` too."""
    if not _JARS_ADDED:
        from sparkflow_testing.spark.kafka_source import served_version, spark_kafka_jars

        for jar in spark_kafka_jars(served_version()):
            spark.sql(f"ADD JAR '{jar}'")
            _JARS_ADDED.append(str(jar))
    return spark


@pytest.fixture(scope="session")
def real_kafka(reference_broker: KafkaBroker) -> KafkaBroker:
    """Real Apache Kafka (the differential tests compare sources, not brokers)."""
    if reference_broker.kind != "apache-kafka":
        pytest.skip(
            f"differential tests need real Apache Kafka (java and mvn); this run has {reference_broker.kind}"
        )
    return reference_broker


@pytest.fixture(scope="session")
def topic_store(real_kafka: KafkaBroker) -> TopicStore:
    """Topics by shape, shared by every differential test of the session."""
    return TopicStore(real_kafka)
