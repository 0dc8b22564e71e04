"""Kafka brokers for the integration tests: one session broker per kind that can run here.

``kafka_cluster`` is parametrized over real Apache Kafka (a child JVM wherever java and mvn exist;
else Testcontainers where a Docker engine answers), noida-db and tansu
(``KAFKA_BROKERS=apache-kafka,noida-db`` chooses); each stand-in declares its gaps and
``require(broker, *gaps)`` skips a test that needs one (real Kafka has none). ``reference_broker`` is
one of the same brokers, the most faithful chosen, for heavy tests that run on one broker only.
``own_kafka_broker`` is a broker of each kind started for one test alone: a test that kills or
restarts a broker uses it, so one bad restart cannot fail every test after it on the session's broker.
The logic lives in :mod:`sparkflow_testing.kafka.brokers`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from sparkflow_testing.kafka.broker import Gap, KafkaBroker
from sparkflow_testing.kafka.brokers import available_broker_kinds, start_broker


def _kinds() -> list[str]:
    wanted = os.environ.get("KAFKA_BROKERS")
    if wanted:
        return [k.strip() for k in wanted.split(",") if k.strip()]
    return available_broker_kinds()


_STARTED: dict[str, KafkaBroker] = {}


def _broker(kind: str) -> KafkaBroker:
    if kind not in _STARTED:
        _STARTED[kind] = start_broker(kind)
    return _STARTED[kind]


@pytest.fixture(scope="session", autouse=True)
def _stop_kafka_brokers() -> Iterator[None]:
    yield
    while _STARTED:
        _STARTED.popitem()[1].stop()


@pytest.fixture(scope="session", params=_kinds())
def kafka_cluster(request: Any) -> KafkaBroker:
    """A running broker of each kind that can run here."""
    return _broker(request.param)


@pytest.fixture(params=_kinds())
def own_kafka_broker(request: Any) -> Iterator[KafkaBroker]:
    """A broker of each kind that can run here, started for this test only and stopped after it."""
    broker = start_broker(request.param)
    try:
        yield broker
    finally:
        broker.stop()


_FAITHFUL_FIRST = ("apache-kafka", "kafka", "noida-db", "tansu")


@pytest.fixture(scope="session")
def reference_broker() -> KafkaBroker:
    """One broker for tests that need a faithful broker rather than every kind (real Kafka first)."""
    kinds = _kinds()
    return _broker(next((k for k in _FAITHFUL_FIRST if k in kinds), kinds[0]))


def require(broker: KafkaBroker, *gaps: Gap) -> None:
    """Skip the test when ``broker`` gets any of ``gaps`` wrong."""
    reason = broker.gap_reason(*gaps)
    if reason:
        pytest.skip(reason)
