"""Producers pooled per Python worker process, keyed by producing path and settings (as Spark's sink).

Spark's JVM Kafka sink keeps its producers in ``CachedKafkaProducer`` (keyed by the producer
settings, closed after ``spark.kafka.producer.cache.timeout``), so a write's tasks and the next
micro-batch's tasks send over connections that are already open, with the topic metadata already
fetched. kafka-unified does the same per Python worker, which Spark reuses between tasks: a task
borrows an idle producer for its settings, or makes one, and gives it back once every record it
produced is acknowledged. A producer whose task failed (a failed delivery, a client error, an
exception from Spark's row iterator) is closed, never pooled, so nothing it still held is sent later.
Idle producers close after ``IDLE_TIMEOUT_S`` and at interpreter exit (``connector_base.client_pool``).

Threading: ``acquire`` / ``release`` may be called from any thread; a producer is one task's alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, cast

from connector_base.client_pool import IdleClientPool, config_key

__all__ = ["IDLE_TIMEOUT_S", "PooledProducer", "acquire", "close_idle", "pool_size", "release"]

IDLE_TIMEOUT_S = 60.0
"""An idle producer is closed after this long (Spark's ``spark.kafka.producer.cache.timeout`` is 10 min)."""

MAX_IDLE_PER_KEY = 4


class PooledProducer(Protocol):
    """What the pool holds: a producing path's client, closed when it leaves the pool for good."""

    def close(self) -> None:
        """Free the client; what it still queues is dropped."""


ProducerT = TypeVar("ProducerT", bound=PooledProducer)


def _close(producer: PooledProducer) -> None:
    producer.close()


_POOL: IdleClientPool[PooledProducer] = IdleClientPool(
    "kafka-producers", _close, IDLE_TIMEOUT_S, MAX_IDLE_PER_KEY
)


def acquire(path: str, config: Mapping[str, Any], create: Callable[[], ProducerT]) -> tuple[str, ProducerT]:
    """An idle producer of ``path`` (``native``/``python``) for ``config``, else ``create()``; and its key."""
    key = f"{path}:{config_key(config)}"
    # the key starts with the path, and each path pools one client type
    return key, cast(ProducerT, _POOL.acquire(key, create))


def release(key: str, producer: PooledProducer, reusable: bool) -> None:
    """Give ``producer`` back after its task: pooled if ``reusable`` (all acknowledged), else closed."""
    _POOL.release(key, producer, reusable)


def close_idle(older_than_s: float = 0.0) -> int:
    """Close idle producers now (all by default); how many were closed."""
    return _POOL.close_idle(older_than_s)


def pool_size() -> tuple[int, int]:
    """``(producers created so far, idle producers now)`` in this process (for tests)."""
    return _POOL.created, _POOL.idle_count()
