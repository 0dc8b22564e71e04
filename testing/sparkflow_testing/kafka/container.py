"""A real Apache Kafka in a Docker container through Testcontainers, where a Docker engine answers.

Only :func:`sparkflow_testing.kafka.brokers.available_broker_kinds` picks it, and only where there is
no ``java`` and ``mvn`` for the Maven-resolved broker (:mod:`sparkflow_testing.kafka.apache_kafka`).
"""

from __future__ import annotations

from sparkflow_testing.kafka.broker import KafkaBroker

__all__ = ["docker_available", "start_testcontainers_kafka"]


def docker_available() -> bool:
    """Whether a Docker engine answers (and the ``testcontainers`` package is importable)."""
    try:
        import testcontainers.kafka  # type: ignore[import-untyped]  # noqa: F401 - is it installed?

        import docker  # type: ignore[import-untyped]
    except ImportError:
        return False
    try:
        client = docker.from_env(timeout=3)
        return bool(client.ping())
    except Exception:  # any failure means no usable engine
        return False


def start_testcontainers_kafka() -> KafkaBroker:
    """A real Apache Kafka in a container (only where ``docker_available()``)."""
    from testcontainers.kafka import KafkaContainer

    container = KafkaContainer().start()
    return KafkaBroker(kind="kafka", bootstrap=container.get_bootstrap_server(), _container=container)
