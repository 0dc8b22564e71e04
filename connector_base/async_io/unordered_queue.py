"""``UnorderedStreamElementQueue``: emits elements in the order they complete."""

from __future__ import annotations

from typing_extensions import override

from connector_base.async_io.stream_element_queue import StreamElement, StreamElementQueue

__all__ = ["UnorderedStreamElementQueue"]


class UnorderedStreamElementQueue(StreamElementQueue):
    """Elements leave as soon as they complete, in completion order.

    No barrier is needed inside a task: a Spark task processes one partition of one micro-batch, and
    Spark moves its watermark only between micro-batches, so the micro-batch is the barrier.
    """

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self._done: list[StreamElement] = []

    @override
    def _added(self, element: StreamElement) -> None:
        pass

    @override
    def _completed(self, element: StreamElement) -> None:
        self._done.append(element)

    @override
    def _ready(self) -> bool:
        return bool(self._done)

    @override
    def _pop(self) -> list[StreamElement]:
        ready, self._done = self._done, []
        return ready
