"""The sink's flush, shared by both producing paths: a task's rows count as written only once every
delivery is acknowledged (at least once)."""

from __future__ import annotations

import time
from collections.abc import Callable

from connector_base import ConnectorError

__all__ = ["FLUSH_SLICE_S", "FLUSH_TIMEOUT_S", "wait_for_deliveries"]

FLUSH_TIMEOUT_S = 120.0
FLUSH_SLICE_S = 1.0


def wait_for_deliveries(
    flush: Callable[[float], int], failure: Callable[[], str | None], check_client: Callable[[], None]
) -> None:
    """Flush until every produced record is acknowledged (at least once); raise on a failed delivery.

    ``flush(seconds)`` returns what is still outstanding, ``failure()`` the first failed delivery,
    ``check_client()`` raises on an unrecoverable client error. The flush runs in slices, so a
    wrong password or an untrusted certificate ends the wait at once.
    """
    deadline = time.monotonic() + FLUSH_TIMEOUT_S
    remaining = flush(FLUSH_SLICE_S)
    while remaining and failure() is None and time.monotonic() < deadline:
        check_client()
        remaining = flush(FLUSH_SLICE_S)
    error = failure()
    if error is not None:
        raise ConnectorError(f"Kafka delivery failed: {error}")
    if remaining:
        raise ConnectorError(f"{remaining} records were not delivered within {FLUSH_TIMEOUT_S}s")
