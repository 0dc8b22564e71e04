"""Whether the bootstrap servers answer: the driver's first contact, failing in seconds, not minutes.

librdkafka retries an unresolvable host or a refused connection for ever, logging each attempt
(about 20 lines a second per client for a bad host name), and its metadata calls simply time out.
Before a query plans anything, :func:`first_contact` asks for metadata in short slices with a silent
client and watches librdkafka's error reports: when every bootstrap server is unresolvable or
refuses connections for ``FIRST_CONTACT_GRACE_S`` (a broker still starting gets that long), or
nothing answers within ``kafka.default.api.timeout.ms``, it raises ``ClusterUnreachableError``
naming the servers and the reason. It can use the caller's own client (a batch query's planning
client: one client's start and connection per query instead of two). :class:`OutageClock` bounds a
later outage the same way.
"""

from __future__ import annotations

import time
from typing import Any

from connector_base import ConnectorError
from connectors.kafka.client_errors import ConnectErrorWatch
from connectors.kafka.options import KafkaSourceOptions

__all__ = ["ClusterUnreachableError", "OutageClock", "first_contact"]

FIRST_CONTACT_GRACE_S = 2.0
CONTACT_SLICE_S = 0.25


class ClusterUnreachableError(ConnectorError):
    """The bootstrap servers did not answer within the bound; the query fails instead of waiting."""


def _message(options: KafkaSourceOptions, why: str, waited_s: float) -> str:
    return (
        f"cannot reach the Kafka cluster at kafka.bootstrap.servers={options.bootstrap_servers!r} "
        f"(waited {waited_s:.1f} s): {why}. "
        f"Check the host names and ports (the wait is bounded by kafka.default.api.timeout.ms, "
        f"now {options.api_timeout_ms} ms)"
    )


def first_contact(
    options: KafkaSourceOptions, admin: Any = None, watch: ConnectErrorWatch | None = None
) -> None:
    """Return once the cluster answers a metadata request; raise ``ClusterUnreachableError`` if not.

    ``admin`` (an ``AdminClient`` whose ``error_cb`` is ``watch``, made with ``log_level`` 0): the
    caller's client, which then goes on serving the caller's requests; by default a silent client of
    this call's own.
    """
    if admin is None or watch is None:
        from confluent_kafka.admin import AdminClient

        watch = ConnectErrorWatch("connecting to Kafka")
        admin = AdminClient({**options.driver_client_config(), "error_cb": watch, "log_level": 0})
    began = time.monotonic()
    deadline = began + options.api_timeout_ms / 1000.0
    last = ""
    while True:
        try:
            admin.list_topics(timeout=max(0.05, min(CONTACT_SLICE_S, deadline - time.monotonic())))
            return
        except Exception as e:  # this slice timed out: look at what librdkafka reported
            last = str(e)
        admin.poll(0)
        watch.raise_if_failed()  # a wrong password or an untrusted certificate: no grace
        now = time.monotonic()
        if watch.unreachable is not None and now - began >= FIRST_CONTACT_GRACE_S:
            raise ClusterUnreachableError(_message(options, watch.unreachable, now - began))
        if now >= deadline:
            raise ClusterUnreachableError(
                _message(options, f"no answer ({watch.unreachable or last})", now - began)
            )


class OutageClock:
    """How long the cluster has not answered a running query; past the bound the query fails.

    The bound is (``fetchOffset.numRetries`` + 1) × ``kafka.default.api.timeout.ms``, the time
    Spark's driver would spend on one lookup's retries. One clock serves a query's planner and its
    enumerator's partition discovery (``KafkaSource.outage``), so that an outage both see is
    counted once, from the first failed lookup, whichever asked. Threading: the driver's
    stream-reader thread.
    """

    def __init__(self, options: KafkaSourceOptions) -> None:
        self._options = options
        self._bound_s = (options.fetch_offset_retries + 1) * options.api_timeout_ms / 1000.0
        self._down_since: float | None = None

    @property
    def down(self) -> bool:
        """Whether the last lookup failed (no answer since)."""
        return self._down_since is not None

    def answered(self) -> None:
        """The cluster answered: the outage, if any, is over."""
        self._down_since = None

    def failed(self, error: Exception, started: float) -> None:
        """A lookup begun at ``started`` (monotonic) failed; raise once the outage outlasts the bound."""
        now = time.monotonic()
        if self._down_since is None:
            self._down_since = started
        if now - self._down_since >= self._bound_s:
            raise ClusterUnreachableError(
                _message(self._options, f"no answer ({error})", now - self._down_since)
            ) from error
