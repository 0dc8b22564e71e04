"""``NetworkRetry``: the bound on retrying Pravega calls that fail on the network.

A call that fails on the network (connection refused or reset, no answer within ``readTimeoutMs``)
is tried again with backoff (0.2 s doubling to 2 s) until ``networkTimeoutMs`` has passed since the
first failed attempt began; then ``ConnectorError`` names the call, the endpoint and the option. A
success in between starts the bound afresh. Only calls that read are retried: the controller's
queries and the segment store's ``GetStreamSegmentInfo``/``ReadSegment`` (a read resumes at the
first byte not yet handed on, so nothing is lost or read twice).

Threading: one instance per retried operation, used by the thread that runs it.
"""

from __future__ import annotations

import logging
import time

from connector_base import ConnectorError

__all__ = ["FIRST_DELAY_S", "MAX_DELAY_S", "NetworkRetry"]

LOG = logging.getLogger(__name__)

FIRST_DELAY_S = 0.2
MAX_DELAY_S = 2.0


class NetworkRetry:
    """Backoff and bound for one operation (see the module docstring)."""

    __slots__ = ("_bound_ms", "_what", "_endpoint", "_failing_since", "_attempt_began", "_delay")

    def __init__(self, what: str, endpoint: str, network_timeout_ms: int) -> None:
        self._what = what
        self._endpoint = endpoint
        self._bound_ms = network_timeout_ms
        self._failing_since: float | None = None
        self._attempt_began = time.monotonic()
        self._delay = FIRST_DELAY_S

    def attempt(self) -> None:
        """Call before each attempt (marks when it began)."""
        self._attempt_began = time.monotonic()

    def succeeded(self) -> None:
        """Progress was made: the next failure starts the bound afresh."""
        self._failing_since = None
        self._delay = FIRST_DELAY_S

    def failed(self, error: BaseException, endpoint: str | None = None) -> None:
        """Wait before the next attempt, or raise ``ConnectorError`` once the bound has passed."""
        now = time.monotonic()
        if self._failing_since is None:
            self._failing_since = self._attempt_began
        elapsed = now - self._failing_since
        where = endpoint or self._endpoint
        if elapsed >= self._bound_ms / 1000.0:
            raise ConnectorError(
                f"Pravega {self._what} at {where} failed on the network for {elapsed:.1f} s, longer than "
                f"networkTimeoutMs={self._bound_ms}: {type(error).__name__}: {error}"
            ) from error
        LOG.info("Pravega %s at %s failed on the network, retrying in %.1f s: %s", self._what, where,
                 self._delay, error)  # fmt: skip
        time.sleep(self._delay)
        self._delay = min(MAX_DELAY_S, self._delay * 2)
