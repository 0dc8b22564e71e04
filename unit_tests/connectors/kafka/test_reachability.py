"""The outage bound of a running query: (fetchOffset.numRetries + 1) x kafka.default.api.timeout.ms."""

from __future__ import annotations

import time

import pytest

from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.reachability import ClusterUnreachableError, OutageClock


def _clock(**extra: str) -> OutageClock:
    opts = {"kafka.bootstrap.servers": "broker-a:9092", "subscribe": "t", **extra}
    return OutageClock(KafkaSourceOptions.parse(opts, streaming=True))


def test_short_outages_are_tolerated_and_an_answer_resets_the_clock() -> None:
    clock = _clock(**{"kafka.default.api.timeout.ms": "1000", "fetchOffset.numRetries": "1"})
    now = time.monotonic()
    clock.failed(RuntimeError("timed out"), started=now - 1.5)
    clock.answered()
    clock.failed(RuntimeError("timed out"), started=now - 1.5)  # a new outage, 1.5 s < 2 s


def test_an_outage_past_the_bound_fails_naming_the_servers() -> None:
    clock = _clock(**{"kafka.default.api.timeout.ms": "1000", "fetchOffset.numRetries": "1"})
    clock.failed(RuntimeError("timed out"), started=time.monotonic() - 1.9)
    time.sleep(0.2)
    with pytest.raises(ClusterUnreachableError, match="broker-a:9092.*kafka.default.api.timeout.ms"):
        clock.failed(RuntimeError("timed out"), started=time.monotonic())  # counted from the first
