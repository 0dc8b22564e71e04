"""The driver's offset lookups never hand out an offset librdkafka reported as invalid, nor wait for ever.

librdkafka's ListOffsets futures can resolve to ``OFFSET_INVALID`` (-1001) without an error when a
request got no answer: a CI run's planner took it as "the log now ends at offset -1001" during a
network outage and failed the query with a false data loss. These tests feed such answers through
the admin client's interface (the broker cannot be made to send them on purpose) and check that the
lookup retries, then fails as an unanswered lookup, which the planner treats as an outage. A future
that never resolves counts as an unanswered attempt too: the planning thread waits on none for ever.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from typing import Any

import pytest

from connector_base import ConnectorError
from connectors.kafka import cluster_client
from connectors.kafka.cluster_client import KafkaClusterClient
from connectors.kafka.options import KafkaSourceOptions

OFFSET_INVALID = -1001


class _Result:
    def __init__(self, offset: int, timestamp: int = -1) -> None:
        self.offset = offset
        self.timestamp = timestamp


class _Admin:
    """Answers each ``list_offsets`` call with the next of ``answers`` (one offset per partition)."""

    def __init__(self, answers: Iterator[int]) -> None:
        self._answers = answers
        self.calls = 0

    def list_offsets(self, specs: Mapping[Any, Any], **_kwargs: Any) -> dict[Any, Future[_Result]]:
        self.calls += 1
        offset = next(self._answers)
        out: dict[Any, Future[_Result]] = {}
        for tp in specs:
            f: Future[_Result] = Future()
            f.set_result(_Result(offset, timestamp=1000 if offset >= 0 else -1))
            out[tp] = f
        return out


class _SilentAdmin:
    """Hands out futures that never resolve (a request librdkafka never completes)."""

    def __init__(self) -> None:
        self.calls = 0

    def list_offsets(self, specs: Mapping[Any, Any], **_kwargs: Any) -> dict[Any, Future[_Result]]:
        self.calls += 1
        return {tp: Future() for tp in specs}

    def describe_configs(self, resources: list[Any], **_kwargs: Any) -> dict[Any, Future[Any]]:
        self.calls += 1
        return {r: Future() for r in resources}


def _client(*answers: int, api_timeout_ms: int = 30_000, **more: str) -> tuple[KafkaClusterClient, _Admin]:
    options = KafkaSourceOptions.parse(
        {
            **more,
            "kafka.bootstrap.servers": "127.0.0.1:1",
            "subscribe": "t",
            "fetchOffset.numRetries": "2",
            "kafka.default.api.timeout.ms": str(api_timeout_ms),
        },
        streaming=True,
    )
    client = KafkaClusterClient(options, retry_interval_s=0.0)
    admin = _Admin(iter(answers))
    client._admin = admin
    return client, admin


@pytest.mark.parametrize("lookup", ["earliest", "latest"])
def test_an_invalid_offset_is_retried_and_a_valid_answer_taken(lookup: str) -> None:
    client, admin = _client(OFFSET_INVALID, 500)
    assert getattr(client, lookup)([("t", 0), ("t", 1)]) == {("t", 0): 500, ("t", 1): 500}
    assert admin.calls == 2


def test_invalid_offsets_past_the_retries_fail_as_an_unanswered_lookup() -> None:
    client, admin = _client(*[OFFSET_INVALID] * 3)
    with pytest.raises(ConnectorError, match="looking up latest offsets failed after 3 attempts"):
        client.latest([("t", 0)])
    assert admin.calls == 3


def test_no_record_at_a_time_is_none_but_an_invalid_answer_is_retried() -> None:
    client, _ = _client(-1)
    assert client.for_times({("t", 0): 5}) == {("t", 0): None}
    client, admin = _client(OFFSET_INVALID, 7)
    assert client.for_times({("t", 0): 5}) == {("t", 0): 7}
    assert admin.calls == 2


def test_an_empty_partition_has_no_max_timestamp_but_an_invalid_answer_is_retried() -> None:
    client, _ = _client(-1)
    assert client.max_timestamps([("t", 0)]) == {("t", 0): None}
    client, admin = _client(OFFSET_INVALID, 3)
    assert client.max_timestamps([("t", 0)]) == {("t", 0): 1000}
    assert admin.calls == 2


@pytest.mark.timeout(30)
def test_an_answer_that_never_comes_is_a_failed_attempt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster_client, "ANSWER_GRACE_S", 0.1)
    client, _ = _client(api_timeout_ms=200)
    silent = _SilentAdmin()
    client._admin = silent
    started = time.monotonic()
    with pytest.raises(ConnectorError, match="looking up latest offsets failed after 3 attempts: no answer"):
        client.latest([("t", 0), ("t", 1)])
    assert silent.calls == 3
    assert time.monotonic() - started < 3 * (0.2 + 0.1) + 1.0
    # the timestamp types of topics: not answered means CreateTime (the safe assumption)
    assert client.log_append_time_topics(["t"]) == set()


@pytest.mark.timeout(60)
def test_a_group_commit_and_the_close_after_it_wait_no_longer_than_the_api_timeout() -> None:
    """librdkafka's synchronous commit waits for ever for a coordinator when no broker answers (and
    closing a consumer with a commit outstanding does too): against an address where nothing listens,
    the commit fails and the close returns, each within ``kafka.default.api.timeout.ms``."""
    # log_level 0: the consumer left closing in the background retries its connection (and would log
    # each refusal) for as long as the test process lives
    client, _ = _client(api_timeout_ms=1500, **{"kafka.group.id": "monitoring", "kafka.log_level": "0"})
    started = time.monotonic()
    with pytest.raises(ConnectorError, match=r"no answer within 1500 ms \(kafka.default.api.timeout.ms\)"):
        client.commit({("t", 0): 5})
    assert 1.4 < time.monotonic() - started < 10
    started = time.monotonic()
    client.close()
    assert time.monotonic() - started < 10
    assert client._group_consumer is None
