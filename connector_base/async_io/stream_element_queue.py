"""The bounded queue of one task's in-flight elements; ordered and unordered variants extend it.

Threading: elements are added and completed results popped on the task's thread; ``complete`` is
called on the event loop's thread. One condition guards the queue; the task thread waits on it for
a completion that it can emit.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from connector_base.errors import InvalidOptionError

__all__ = ["StreamElement", "StreamElementQueue"]


class StreamElement:
    """One input element in the queue: its value, its idempotency key, then its rows or its error."""

    __slots__ = ("done", "error", "key", "results", "timed_out", "value")

    def __init__(self, value: Any, key: str | None) -> None:
        self.value = value
        self.key = key
        self.results: Sequence[Any] = ()
        self.error: BaseException | None = None
        self.done = False
        self.timed_out = False


class StreamElementQueue(ABC):
    """At most ``capacity`` elements, in flight or completed and not yet emitted."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise InvalidOptionError("capacity", capacity, "an integer >= 1")
        self.capacity = capacity
        self._size = 0
        self._condition = threading.Condition()

    def has_capacity(self) -> bool:
        """Whether another element may be added."""
        with self._condition:
            return self._size < self.capacity

    def __len__(self) -> int:
        with self._condition:
            return self._size

    def add(self, value: Any, key: str | None) -> StreamElement:
        """Add an element; the caller has checked ``has_capacity``."""
        element = StreamElement(value, key)
        with self._condition:
            if self._size >= self.capacity:
                raise RuntimeError(f"the queue is full ({self.capacity} elements)")
            self._size += 1
            self._added(element)
        return element

    def complete(self, element: StreamElement, results: Sequence[Any], error: BaseException | None) -> None:
        """Record the outcome of ``element`` (on the event loop's thread) and wake the task thread."""
        with self._condition:
            element.results = results
            element.error = error
            element.done = True
            self._completed(element)
            if self._ready():
                self._condition.notify_all()

    def pop_ready(self) -> list[StreamElement]:
        """The completed elements that may be emitted now, removed from the queue, in emit order."""
        with self._condition:
            ready = self._pop()
            self._size -= len(ready)
            return ready

    def wait_ready(self, timeout_s: float | None = None) -> bool:
        """Block until an element may be emitted (or ``timeout_s`` passed); whether one may."""
        with self._condition:
            return self._condition.wait_for(self._ready, timeout_s)

    @abstractmethod
    def _added(self, element: StreamElement) -> None:
        """Track a new element (lock held)."""

    @abstractmethod
    def _completed(self, element: StreamElement) -> None:
        """Track a completion (lock held)."""

    @abstractmethod
    def _ready(self) -> bool:
        """Whether ``_pop`` would return something (lock held)."""

    @abstractmethod
    def _pop(self) -> list[StreamElement]:
        """Remove and return what may be emitted now (lock held)."""
