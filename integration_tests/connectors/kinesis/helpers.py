"""Shared helpers of the Kinesis integration tests."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from sparkflow_testing.kinesis.endpoint import KinesisEndpoint


def write(
    endpoint: KinesisEndpoint, stream: str, count: int, keys: int = 10, tag: str = ""
) -> list[tuple[str, bytes]]:
    """Put ``count`` records with unique data ``<tag>-<key>-<n>``; returns ``(key, data)``."""
    tag = tag or uuid.uuid4().hex[:6]
    records = [(f"k{i % keys}", f"{tag}-{i % keys}-{i:08d}".encode()) for i in range(count)]
    endpoint.put_records(stream, records)
    return records


def wait_until(
    predicate: Callable[[], bool], timeout_s: float, what: str, interval_s: float = 0.5, query: Any = None
) -> None:
    """Wait for ``predicate``; with ``query``, fail at once with its error when it has stopped on one."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        if query is not None and query.exception() is not None:
            raise AssertionError(f"the query failed while waiting for {what}: {query.exception()}")
        time.sleep(interval_s)
    raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")


def options(endpoint: KinesisEndpoint, stream: str, **extra: str) -> dict[str, str]:
    base = {
        "streamName": stream,
        "startingPosition": "TRIM_HORIZON",
        "cutSafetyMarginMs": "0",
        "shardDiscoveryIntervalMs": "500",
    }
    return endpoint.options(**{**base, **extra})


def keyed(rows: list[Any]) -> list[tuple[bytes, str]]:
    return [(bytes(r["data"]), r["partitionKey"]) for r in rows]
