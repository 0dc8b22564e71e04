"""``ResultFuture``: how a callback-style ``AsyncFunction`` hands back the results of one element."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Generic, TypeVar

__all__ = ["ResultFuture"]

OUT = TypeVar("OUT")
"""The type of one output row (a dict matching the output schema, for the Spark drivers)."""


class ResultFuture(Generic[OUT]):
    """The pending results of one input element: zero or more rows, or an exception.

    Only the first completion counts; later ones are ignored, so a client callback that fires twice
    cannot emit an element twice.

    Threading: ``complete`` and ``complete_exceptionally`` may be called from any thread (callback
    clients often complete on their own I/O threads); the result is handed to the event loop that
    created the future.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._future: asyncio.Future[list[OUT]] = loop.create_future()

    def complete(self, results: Iterable[OUT]) -> None:
        """Complete with ``results`` (copied into a list at once)."""
        rows = list(results)
        self._loop.call_soon_threadsafe(self._set_result, rows)

    def complete_exceptionally(self, error: BaseException) -> None:
        """Complete with ``error``: the element fails (and may be retried by the retry strategy)."""
        self._loop.call_soon_threadsafe(self._set_exception, error)

    def _set_result(self, rows: list[OUT]) -> None:
        if not self._future.done():
            self._future.set_result(rows)

    def _set_exception(self, error: BaseException) -> None:
        if not self._future.done():
            self._future.set_exception(error)

    async def wait(self) -> list[OUT]:
        """The results, once completed (on the loop that created the future)."""
        return await self._future
