"""``IdleClientPool``: expensive clients pooled per process, closed when idle and at exit.

Spark reuses Python workers between tasks, so a pooled client (a Kafka consumer) saves a
connection per task, as Spark's JVM sources pool theirs. An idle client must not outlive its use:
one left in a long-lived worker keeps reconnecting (and logging) after its broker has gone. So an
idle client is closed after ``idle_timeout_s`` (Spark's Kafka consumer cache closes after 5 min;
the default here is shorter, clients are cheap to reopen), and every idle client is closed at
interpreter exit.

Threading: ``acquire`` / ``release`` / ``close_idle`` may be called from any thread (a lock guards
the pool); a borrowed client is the borrower's alone. A daemon evictor thread, started by the first
``release``, closes clients idle for too long; it ends when the pool is empty and starts again with
the next ``release``. Clients are closed outside the lock.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar

from connector_base.serialization import dumps_canonical

__all__ = ["DEFAULT_IDLE_TIMEOUT_S", "IdleClientPool", "close_all_idle", "config_key"]

LOG = logging.getLogger(__name__)

ClientT = TypeVar("ClientT")
"""The pooled client type."""

DEFAULT_IDLE_TIMEOUT_S = 30.0
DEFAULT_MAX_IDLE_PER_KEY = 4


def config_key(config: Mapping[str, Any]) -> str:
    """A pool key for clients made from ``config``: the same settings give the same key (in memory
    only: a config may hold secrets)."""
    return dumps_canonical({k: str(v) for k, v in config.items()})


_POOLS: weakref.WeakSet[IdleClientPool[object]] = weakref.WeakSet()


class IdleClientPool(Generic[ClientT]):
    """Idle clients per key, each closed by ``close`` after ``idle_timeout_s`` or at exit."""

    def __init__(
        self,
        name: str,
        close: Callable[[ClientT], None],
        idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
        max_idle_per_key: int = DEFAULT_MAX_IDLE_PER_KEY,
    ) -> None:
        self.name = name
        self.idle_timeout_s = idle_timeout_s
        self.max_idle_per_key = max_idle_per_key
        self._close = close
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._idle: dict[Hashable, list[tuple[float, ClientT]]] = {}
        self._evictor: threading.Thread | None = None
        self.created = 0
        _POOLS.add(self)  # type: ignore[arg-type]

    def acquire(self, key: Hashable, create: Callable[[], ClientT]) -> ClientT:
        """The most recently released idle client for ``key``, or a new one from ``create``."""
        with self._lock:
            idle = self._idle.get(key)
            if idle:
                _since, client = idle.pop()
                if not idle:
                    del self._idle[key]
                return client
            self.created += 1
        return create()

    def release(self, key: Hashable, client: ClientT, reusable: bool = True) -> None:
        """Give ``client`` back; it is closed now when not ``reusable`` or the key's pool is full."""
        if reusable:
            with self._lock:
                idle = self._idle.setdefault(key, [])
                if len(idle) < self.max_idle_per_key:
                    idle.append((time.monotonic(), client))
                    self._ensure_evictor()
                    return
        self._close_quietly(client)

    def idle_count(self) -> int:
        """Idle clients now."""
        with self._lock:
            return sum(len(v) for v in self._idle.values())

    def close_idle(self, older_than_s: float = 0.0) -> int:
        """Close the clients idle for at least ``older_than_s``; how many were closed."""
        now = time.monotonic()
        expired: list[ClientT] = []
        with self._lock:
            for key in list(self._idle):
                keep = [(t, c) for t, c in self._idle[key] if now - t < older_than_s]
                expired.extend(c for t, c in self._idle[key] if now - t >= older_than_s)
                if keep:
                    self._idle[key] = keep
                else:
                    del self._idle[key]
        for client in expired:
            self._close_quietly(client)
        if expired:
            LOG.debug("%s: closed %d idle clients", self.name, len(expired))
        return len(expired)

    def _ensure_evictor(self) -> None:
        # called with the lock held
        if self._evictor is None or not self._evictor.is_alive():
            self._evictor = threading.Thread(
                target=self._evict_loop, name=f"{self.name}-evictor", daemon=True
            )
            self._evictor.start()
        self._wake.notify_all()

    def _evict_loop(self) -> None:
        while True:
            with self._lock:
                if not self._idle:
                    self._evictor = None
                    return
                oldest = min(t for entries in self._idle.values() for t, _c in entries)
                delay = oldest + self.idle_timeout_s - time.monotonic()
                if delay > 0:
                    self._wake.wait(min(delay, self.idle_timeout_s))
                    continue
            self.close_idle(self.idle_timeout_s)

    def _close_quietly(self, client: ClientT) -> None:
        try:
            self._close(client)
        except Exception as e:  # closing is best effort
            LOG.debug("%s: closing a client failed: %s", self.name, e)


def close_all_idle() -> int:
    """Close every idle client of every pool in this process; how many were closed.

    A retried Spark task calls this first (as Spark's Kafka source invalidates its cached consumers
    on a task's second attempt): the failure may have been a pooled client's, and the next attempt
    must not borrow it again.
    """
    return sum(pool.close_idle() for pool in list(_POOLS))


@atexit.register
def _close_all_pools() -> None:
    close_all_idle()
