"""Which local Kafka-protocol brokers run here, and starting one by kind (see ``BROKERS.md``).

``start_broker(kind)`` starts one: ``apache-kafka`` (real Apache Kafka as a child JVM, see
:mod:`sparkflow_testing.kafka.apache_kafka`), ``kafka`` (Testcontainers,
:mod:`sparkflow_testing.kafka.container`), ``noida-db`` or ``tansu`` (the stand-ins,
:mod:`sparkflow_testing.kafka.stand_ins`). Each returns a running
:class:`~sparkflow_testing.kafka.broker.KafkaBroker`.

The demo calls ``start_embedded_kafka()`` / ``KafkaBroker.stop()``.
"""

from __future__ import annotations

from sparkflow_testing.kafka.apache_kafka import start_apache_kafka
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.kafka.container import docker_available, start_testcontainers_kafka
from sparkflow_testing.kafka.stand_ins import start_noida_db, start_tansu
from sparkflow_testing.maven import java_and_maven_available

__all__ = ["BROKER_KINDS", "available_broker_kinds", "start_broker", "start_embedded_kafka"]

BROKER_KINDS = ("apache-kafka", "kafka", "noida-db", "tansu")


def available_broker_kinds() -> list[str]:
    """The broker kinds that can run here, real Kafka first.

    ``apache-kafka`` (a child JVM) wherever ``java`` and ``mvn`` are on the PATH; ``kafka``
    (Testcontainers) only where a Docker engine answers and there is no JVM broker; the stand-ins
    always.
    """
    kinds = ["noida-db", "tansu"]
    if java_and_maven_available():
        kinds.insert(0, "apache-kafka")
    elif docker_available():
        kinds.insert(0, "kafka")
    return kinds


def start_broker(kind: str) -> KafkaBroker:
    """Start a broker of ``kind`` (one of ``BROKER_KINDS``)."""
    match kind:
        case "apache-kafka":
            return start_apache_kafka()
        case "noida-db":
            return start_noida_db()
        case "tansu":
            return start_tansu()
        case "kafka":
            return start_testcontainers_kafka()
        case _:
            raise ValueError(f"unknown broker kind {kind!r}; expected one of {BROKER_KINDS}")


def start_embedded_kafka(port: int | None = None, data_dir: str | None = None) -> KafkaBroker:
    """For the demo: an embedded noida-db Kafka broker; call ``stop()`` on the result when done."""
    return start_noida_db(port=port, data_dir=data_dir)
