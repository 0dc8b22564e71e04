"""``DeadlineWatchdog``: one timer for a task's element timeouts, instead of one timer per element.

All elements of a task share one timeout, so their deadlines come in the order they were started:
a queue of (deadline, task) with a single timer on its head is enough.

Threading: used only on the event loop's thread.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from connector_base.async_io.stream_element_queue import StreamElement

__all__ = ["DeadlineWatchdog"]


class DeadlineWatchdog:
    """Marks an element ``timed_out`` and cancels its task once ``timeout_s`` passed since ``watch``."""

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout_s: float) -> None:
        self._loop = loop
        self._timeout_s = timeout_s
        self._entries: deque[tuple[float, asyncio.Task[Any], StreamElement]] = deque()
        self._timer: asyncio.TimerHandle | None = None

    def watch(self, task: asyncio.Task[Any], element: StreamElement) -> None:
        """Start the clock of ``element``, run by ``task``."""
        entries = self._entries
        while entries and entries[0][1].done():
            entries.popleft()
        deadline = self._loop.time() + self._timeout_s
        entries.append((deadline, task, element))
        if self._timer is None:
            self._timer = self._loop.call_at(deadline, self._expire)

    def _expire(self) -> None:
        self._timer = None
        entries = self._entries
        now = self._loop.time()
        while entries and (entries[0][0] <= now or entries[0][1].done()):
            _, task, element = entries.popleft()
            if not task.done():
                element.timed_out = True
                task.cancel()
        if entries:
            self._timer = self._loop.call_at(entries[0][0], self._expire)

    def close(self) -> None:
        """Stop the timer."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._entries.clear()
