"""Consumers pooled per Python worker process, keyed by their configuration (as Spark's JVM source).

Spark reuses Python workers between tasks, so a micro-batch's tasks find a connected consumer
instead of paying a new connection each time. A borrowed consumer is the borrower's alone; it is
unassigned when returned.

Threading: ``acquire`` / ``release`` may be called from any thread (a lock guards the pool); a
consumer is used by one thread at a time.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Mapping
from typing import Any

from connector_base.serialization import dumps_canonical

__all__ = ["acquire", "release", "pool_size", "MAX_IDLE_PER_KEY"]

LOG = logging.getLogger(__name__)

MAX_IDLE_PER_KEY = 4

_lock = threading.Lock()
_idle: dict[str, list[Any]] = {}
_created = 0


def _key(config: Mapping[str, Any]) -> str:
    return dumps_canonical({k: str(v) for k, v in config.items()})


def acquire(config: Mapping[str, Any]) -> tuple[str, Any]:
    """A consumer for ``config`` (an idle pooled one if any) and its pool key."""
    global _created
    key = _key(config)
    with _lock:
        idle = _idle.get(key)
        if idle:
            return key, idle.pop()
        _created += 1
    from confluent_kafka import Consumer

    return key, Consumer(dict(config))


def release(key: str, consumer: Any, reusable: bool = True) -> None:
    """Give a consumer back (closed instead when not ``reusable`` or the pool is full)."""
    if reusable:
        try:
            consumer.unassign()
        except Exception as e:  # a broken consumer is closed, not pooled
            LOG.debug("closing a consumer that failed to unassign: %s", e)
            reusable = False
    if reusable:
        with _lock:
            idle = _idle.setdefault(key, [])
            if len(idle) < MAX_IDLE_PER_KEY:
                idle.append(consumer)
                return
    try:
        consumer.close()
    except Exception as e:  # closing is best effort
        LOG.debug("closing a consumer failed: %s", e)


def pool_size() -> tuple[int, int]:
    """``(consumers created so far, idle consumers now)`` in this process (for tests)."""
    with _lock:
        return _created, sum(len(v) for v in _idle.values())


@atexit.register
def _close_all() -> None:
    with _lock:
        consumers = [c for v in _idle.values() for c in v]
        _idle.clear()
    for c in consumers:
        try:
            c.close()
        except Exception:  # noqa: S110  process exit
            pass
