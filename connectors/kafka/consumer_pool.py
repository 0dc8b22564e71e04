"""Consumers pooled per Python worker process, keyed by their configuration (as Spark's JVM source).

Spark reuses Python workers between tasks, so a micro-batch's tasks find a connected consumer
instead of paying a new connection each time. A borrowed consumer is the borrower's alone; it is
unassigned when returned. An idle consumer is closed after ``IDLE_TIMEOUT_S`` and at interpreter
exit (``connector_base.client_pool``), so none keeps reconnecting to a broker that has gone.

Threading: ``acquire`` / ``release`` may be called from any thread; a consumer is used by one
thread at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from connector_base.client_pool import IdleClientPool, config_key

__all__ = [
    "IDLE_TIMEOUT_S",
    "MAX_IDLE_PER_KEY",
    "acquire",
    "close_idle",
    "create",
    "pool_size",
    "release",
    "set_idle_timeout",
]

LOG = logging.getLogger(__name__)

MAX_IDLE_PER_KEY = 4
IDLE_TIMEOUT_S = 30.0
"""An idle consumer is closed after this long (Spark's ``spark.kafka.consumer.cache.timeout`` is 5 min)."""


def _close(consumer: Any) -> None:
    consumer.close()


_POOL: IdleClientPool[Any] = IdleClientPool("kafka-consumers", _close, IDLE_TIMEOUT_S, MAX_IDLE_PER_KEY)


def acquire(
    config: Mapping[str, Any], factory: Callable[[dict[str, Any]], Any] | None = None
) -> tuple[str, Any, bool]:
    """A consumer for ``config`` (an idle pooled one if any), its pool key, and whether it was pooled.

    ``factory`` makes a new one (default: ``create``, a confluent-kafka consumer); consumers of
    different factories are pooled apart.

    A pooled consumer's connections may have died while it was idle (a peer gone without a FIN):
    its first request can then hang for the whole timeout, so a caller that sees a pooled consumer
    fail as unreachable should ``create`` a fresh one before counting an outage.
    """
    make_new = create if factory is None else factory
    key = f"{make_new.__module__}.{make_new.__qualname__}:{config_key(config)}"
    fresh: list[Any] = []

    def make() -> Any:
        fresh.append(make_new(dict(config)))
        return fresh[0]

    consumer = _POOL.acquire(key, make)
    return key, consumer, not fresh


def create(config: Mapping[str, Any]) -> Any:
    """A new consumer for ``config``, not taken from the pool (``release`` may pool it later)."""
    from confluent_kafka import Consumer

    return Consumer(dict(config))


def release(key: str, consumer: Any, reusable: bool = True) -> None:
    """Give a consumer back (closed instead when not ``reusable`` or the pool is full)."""
    if reusable:
        try:
            consumer.unassign()
        except Exception as e:  # a broken consumer is closed, not pooled
            LOG.debug("closing a consumer that failed to unassign: %s", e)
            reusable = False
    _POOL.release(key, consumer, reusable)


def close_idle(older_than_s: float = 0.0) -> int:
    """Close idle consumers now (all by default); how many were closed."""
    return _POOL.close_idle(older_than_s)


def set_idle_timeout(seconds: float) -> None:
    """Change how long a consumer may stay idle (tests, or a worker that should let go sooner)."""
    _POOL.idle_timeout_s = seconds


def pool_size() -> tuple[int, int]:
    """``(consumers created so far, idle consumers now)`` in this process (for tests)."""
    return _POOL.created, _POOL.idle_count()
