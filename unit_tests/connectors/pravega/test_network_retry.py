"""The Pravega network-retry bound and its options (no server: the bound is plain arithmetic)."""

from __future__ import annotations

import time

import pytest

from connector_base import ConnectorError, InvalidOptionError
from connectors.pravega.controller_client import DEFAULT_NETWORK_TIMEOUT_MS, DEFAULT_READ_TIMEOUT_MS
from connectors.pravega.network_retry import NetworkRetry
from connectors.pravega.options import PravegaSinkOptions, PravegaSourceOptions

BASE = {"controller": "tcp://127.0.0.1:9090", "scope": "s", "stream": "t"}


def test_defaults_and_values_reach_the_connection_settings() -> None:
    default = PravegaSourceOptions.parse(BASE, streaming=False).connection
    assert (default.network_timeout_ms, default.read_timeout_ms) == (
        DEFAULT_NETWORK_TIMEOUT_MS,
        DEFAULT_READ_TIMEOUT_MS,
    )
    chosen = PravegaSinkOptions.parse({**BASE, "networkTimeoutMs": "0", "readTimeoutMs": "250"}).connection
    assert (chosen.network_timeout_ms, chosen.read_timeout_ms) == (0, 250)
    assert "network_timeout_ms=0" in repr(chosen)


@pytest.mark.parametrize(
    ("key", "value"),
    [("networkTimeoutMs", "-1"), ("networkTimeoutMs", "2m"), ("readTimeoutMs", "0"), ("readTimeoutMs", "x")],
)
def test_bad_values_fail_at_parse_naming_the_option(key: str, value: str) -> None:
    with pytest.raises(InvalidOptionError, match=key):
        PravegaSourceOptions.parse({**BASE, key: value}, streaming=True)


def test_failures_are_retried_until_the_bound_then_named() -> None:
    retry = NetworkRetry("controller getURI", "127.0.0.1:1", network_timeout_ms=500)
    began = time.monotonic()
    attempts = 0
    with pytest.raises(ConnectorError, match=r"controller getURI at 127\.0\.0\.1:1 .*networkTimeoutMs=500"):
        while True:
            retry.attempt()
            attempts += 1
            retry.failed(ConnectionRefusedError("refused"))
    assert 0.5 <= time.monotonic() - began < 2.5
    assert attempts >= 2


def test_success_starts_the_bound_afresh() -> None:
    retry = NetworkRetry("read", "store", network_timeout_ms=300)
    for _ in range(5):  # 5 x 0.2 s of failures, each followed by progress: never past the bound
        retry.attempt()
        retry.failed(ConnectionResetError("reset"))
        retry.succeeded()


def test_zero_bound_fails_at_the_first_failure() -> None:
    retry = NetworkRetry("read", "store", network_timeout_ms=0)
    retry.attempt()
    with pytest.raises(ConnectorError, match="networkTimeoutMs=0"):
        retry.failed(OSError("down"))
