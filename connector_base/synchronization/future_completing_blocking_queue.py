"""The bounded hand-off queue between fetcher threads and the task thread."""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import Future
from typing import Generic, TypeVar

__all__ = ["FutureCompletingBlockingQueue", "DEFAULT_CAPACITY"]

E = TypeVar("E")
"""The element type."""

DEFAULT_CAPACITY = 2


def _completed() -> Future[None]:
    f: Future[None] = Future()
    f.set_result(None)
    return f


class FutureCompletingBlockingQueue(Generic[E]):
    """A bounded FIFO whose consumer never blocks and whose producers block when it is full.

    The consumer (task thread) calls ``poll`` (non-blocking) and, when it gets nothing, waits on
    ``available_future()``, which completes as soon as an element arrives or ``notify_available``
    is called. Producers (fetcher threads) call ``put``, which blocks while the queue holds
    ``capacity`` elements: that is the back-pressure that keeps memory bounded. A blocked ``put``
    returns ``False`` early when its thread is woken up with ``wake_up_puts``.

    Threading: every method is thread-safe; one condition variable guards the state.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"queue capacity must be >= 1, got {capacity}")
        self._capacity = capacity
        self._queue: deque[E] = deque()
        self._lock = threading.Lock()
        self._not_full = threading.Condition(self._lock)
        self._future: Future[None] = Future()
        self._wakeups: set[int] = set()

    @property
    def capacity(self) -> int:
        """The most elements the queue holds before ``put`` blocks."""
        return self._capacity

    def put(self, thread_key: int, element: E) -> bool:
        """Add ``element``, blocking while full; ``False`` if woken up before it could be added."""
        with self._not_full:
            while len(self._queue) >= self._capacity:
                if thread_key in self._wakeups:
                    self._wakeups.discard(thread_key)
                    return False
                self._not_full.wait()
            if thread_key in self._wakeups:
                self._wakeups.discard(thread_key)
            self._queue.append(element)
            fut = self._future
        if not fut.done():
            try:
                fut.set_result(None)
            except Exception:  # another thread completed it concurrently
                pass
        return True

    def poll(self) -> E | None:
        """Take the head element, or ``None`` at once when empty (never blocks)."""
        with self._not_full:
            if not self._queue:
                return None
            element = self._queue.popleft()
            if not self._queue and self._future.done():
                self._future = Future()
            self._not_full.notify()
            return element

    def available_future(self) -> Future[None]:
        """A future that completes when the queue is non-empty (completed already if it is)."""
        with self._lock:
            if self._queue:
                return _completed()
            return self._future

    def notify_available(self) -> None:
        """Complete the current availability future (a fetcher finished, or an error is pending)."""
        with self._lock:
            fut = self._future
        if not fut.done():
            try:
                fut.set_result(None)
            except Exception:
                pass

    def reset_available(self) -> None:
        """Start a new availability future if the queue is empty (after a spurious notification)."""
        with self._lock:
            if not self._queue and self._future.done():
                self._future = Future()

    def wake_up_puts(self, thread_key: int) -> None:
        """Make a ``put`` blocked on ``thread_key`` return ``False``."""
        with self._not_full:
            self._wakeups.add(thread_key)
            self._not_full.notify_all()

    def size(self) -> int:
        """The number of elements now."""
        with self._lock:
            return len(self._queue)

    def is_empty(self) -> bool:
        """Whether the queue is empty now."""
        return self.size() == 0
