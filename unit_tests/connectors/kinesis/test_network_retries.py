"""Kinesis read calls are retried on network errors within networkTimeoutMs; writes never (no network)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from botocore.exceptions import ConnectionClosedError, EndpointConnectionError, ReadTimeoutError

from connector_base import ConnectorError, InvalidOptionError
from connectors.kinesis.client import _NetworkRetryingClient
from connectors.kinesis.options import KinesisOptions

BASE = {"streamName": "s", "region": "us-east-1", "endpointUrl": "http://127.0.0.1:1"}


class _Calls:
    """A client whose calls fail ``failures`` times with ``error`` and then answer."""

    def __init__(self, error: Exception, failures: int) -> None:
        self.error, self.failures, self.calls = error, failures, 0

    def _answer(self, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return {"ok": kwargs}

    get_records = list_shards = put_records = _answer


def _client(calls: _Calls, retry_read_timeouts: bool = True, **opts: str) -> Any:
    return _NetworkRetryingClient(calls, KinesisOptions.parse({**BASE, **opts}), retry_read_timeouts)


def test_reads_are_retried_until_the_network_answers() -> None:
    calls = _Calls(ConnectionClosedError(endpoint_url="http://x"), failures=2)
    assert _client(calls).get_records(ShardIterator="i") == {"ok": {"ShardIterator": "i"}}
    assert calls.calls == 3


def test_an_outage_longer_than_network_timeout_fails_naming_the_option() -> None:
    calls = _Calls(EndpointConnectionError(endpoint_url="http://127.0.0.1:1"), failures=10**6)
    began = time.monotonic()
    with pytest.raises(ConnectorError, match=r"list_shards .* longer than networkTimeoutMs=500"):
        _client(calls, networkTimeoutMs="500").list_shards()
    assert 0.5 <= time.monotonic() - began < 3


def test_writes_and_answered_read_timeouts_are_not_retried() -> None:
    calls = _Calls(ConnectionClosedError(endpoint_url="http://x"), failures=1)
    with pytest.raises(ConnectionClosedError):
        _client(calls).put_records(Records=[])  # a lost answer may mean written
    timeouts = _Calls(ReadTimeoutError(endpoint_url="http://x"), failures=1)
    with pytest.raises(ReadTimeoutError):
        _client(timeouts, retry_read_timeouts=False).get_records(ShardIterator="i")


def test_network_options_are_validated() -> None:
    opts = KinesisOptions.parse({**BASE, "NETWORKTIMEOUTMS": "0", "readTimeoutMs": "2500"})
    assert (opts.network_timeout_ms, opts.read_timeout_ms) == (0, 2500)
    with pytest.raises(InvalidOptionError, match="readTimeoutMs"):
        KinesisOptions.parse({**BASE, "readTimeoutMs": "0"})
    with pytest.raises(InvalidOptionError, match="networkTimeoutMs"):
        KinesisOptions.parse({**BASE, "networkTimeoutMs": "soon"})
