"""``OrderedStreamElementQueue``: emits in input order; a completed element waits for those before it."""

from __future__ import annotations

from collections import deque

from typing_extensions import override

from connector_base.async_io.stream_element_queue import StreamElement, StreamElementQueue

__all__ = ["OrderedStreamElementQueue"]


class OrderedStreamElementQueue(StreamElementQueue):
    """Elements leave in the order they were added: the completed prefix of the queue is emitted.

    The order spans input Arrow batches: the queue does not care where a batch ended.
    """

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self._elements: deque[StreamElement] = deque()

    @override
    def _added(self, element: StreamElement) -> None:
        self._elements.append(element)

    @override
    def _completed(self, element: StreamElement) -> None:
        pass

    @override
    def _ready(self) -> bool:
        return bool(self._elements) and self._elements[0].done

    @override
    def _pop(self) -> list[StreamElement]:
        ready = []
        while self._elements and self._elements[0].done:
            ready.append(self._elements.popleft())
        return ready
