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


@pytest.mark.timeout(60)
def test_an_unanswered_partition_discovery_past_the_bound_fails_the_query() -> None:
    """Discovery runs on the driver at each trigger (``partitionDiscoveryIntervalMs=0``); its lookups
    count on the query's one clock, which the planner's lookups share. Before, a discovery that got
    no answer was only logged, and the planner's lookups started the count again after it."""
    from connector_base.spark.enumerator_context import DriverEnumeratorContext
    from connectors.kafka.enumerator import KafkaEnumeratorState
    from connectors.kafka.source import KafkaSource
    from connectors.kafka.split import KafkaPartitionSplit

    options = KafkaSourceOptions.parse(
        {
            "kafka.bootstrap.servers": "127.0.0.1:1",  # nothing listens
            "subscribe": "t",
            "kafka.default.api.timeout.ms": "500",
            "fetchOffset.numRetries": "0",
            "fetchOffset.retryIntervalMs": "0",
        },
        streaming=True,
    )
    source = KafkaSource(options)
    context: DriverEnumeratorContext[KafkaPartitionSplit] = DriverEnumeratorContext()
    state = KafkaEnumeratorState(frozenset({("t", 0)}), initial_discovery_done=True)  # a running query
    source.restore_enumerator(context, state).start()
    with pytest.raises(ClusterUnreachableError, match="127.0.0.1:1"):
        context.run_due(force=True)
    assert source.outage.down
