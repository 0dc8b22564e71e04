"""``AsyncWaitOperator``: the function handed to ``mapInArrow`` that runs an ``AsyncFunction``.

Threading: the operator runs on the Spark task's thread, which pulls input batches, adds elements
to the queue and emits results; the elements' coroutines run on the worker's event loop thread
(``worker_event_loop``) and complete their queue entries there. The task thread blocks only while
the queue is full (or, at the end, not yet drained) and nothing can be emitted.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import logging
from collections.abc import Awaitable, Iterable, Iterator, Sequence
from functools import partial
from typing import Any, TypeVar

import pyarrow as pa

from connector_base.async_io.async_function import AsyncFunction
from connector_base.async_io.deadline_watchdog import DeadlineWatchdog
from connector_base.async_io.event_loop import worker_event_loop
from connector_base.async_io.idempotency_key import key_of, set_current_key
from connector_base.async_io.ordered_queue import OrderedStreamElementQueue
from connector_base.async_io.retry_strategy import AsyncRetryStrategy
from connector_base.async_io.stream_element_queue import StreamElement, StreamElementQueue
from connector_base.async_io.unordered_queue import UnorderedStreamElementQueue

__all__ = ["AsyncWaitOperator"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

MIN_SLICE_ROWS = 256
"""Input rows are turned into Python dicts in slices of ``max(capacity, MIN_SLICE_ROWS)``."""

CLOSE_TIMEOUT_S = 30.0
"""How long ``open``/``close`` of the function and the final cancellation may take."""


def _fresh(value: Any) -> Any:
    """A copy of ``value`` for one attempt, so that nothing an attempt does leaks into another."""
    return dict(value) if isinstance(value, dict) else copy.copy(value)


class AsyncWaitOperator:
    """Runs ``fn`` over every row of the input batches, ``capacity`` rows at a time.

    Input is pulled only when the queue has a free slot, so a task holds at most ``capacity``
    elements, one slice of rows converted to dicts and the input batch it is taking rows from.
    Output rows are collected into Arrow batches of ``output_batch_rows`` (the last one smaller).
    """

    def __init__(
        self,
        fn: AsyncFunction[dict[str, Any], dict[str, Any]],
        output_schema: pa.Schema,
        *,
        ordered: bool,
        timeout_s: float,
        capacity: int,
        retry: AsyncRetryStrategy,
        key_columns: Sequence[str],
        output_batch_rows: int,
    ) -> None:
        self._fn = fn
        self._schema = output_schema
        self._ordered = ordered
        self._timeout_s = timeout_s
        self._capacity = capacity
        self._retry = retry
        self._key_columns = tuple(key_columns)
        self._output_batch_rows = output_batch_rows

    def __call__(self, batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Map input batches to output batches (the ``mapInArrow`` contract)."""
        loop = worker_event_loop()
        fn = self._fn
        _run(loop, fn.open())
        queue: StreamElementQueue = (
            OrderedStreamElementQueue(self._capacity)
            if self._ordered
            else UnorderedStreamElementQueue(self._capacity)
        )
        tasks: set[asyncio.Task[Sequence[Any]]] = set()
        watchdog = DeadlineWatchdog(loop, self._timeout_s)
        try:
            yield from self._drive(loop, fn, queue, tasks, watchdog, iter(self._elements(batches)))
        finally:
            _run(loop, _shutdown(tasks, watchdog))
            _run(loop, fn.close())

    def _elements(self, batches: Iterable[pa.RecordBatch]) -> Iterator[tuple[dict[str, Any], str | None]]:
        # rows are converted a slice at a time (memory stays near capacity rows, not a whole batch);
        # to_pylist builds new objects per row: no element shares its value with another
        step = max(self._capacity, MIN_SLICE_ROWS)
        for batch in batches:
            for start in range(0, batch.num_rows, step):
                for row in batch.slice(start, step).to_pylist():
                    yield row, key_of(row, self._key_columns)

    def _drive(
        self,
        loop: asyncio.AbstractEventLoop,
        fn: AsyncFunction[dict[str, Any], dict[str, Any]],
        queue: StreamElementQueue,
        tasks: set[asyncio.Task[Sequence[Any]]],
        watchdog: DeadlineWatchdog,
        elements: Iterator[tuple[dict[str, Any], str | None]],
    ) -> Iterator[pa.RecordBatch]:
        out: list[Any] = []
        exhausted = False
        while True:
            added = []
            while not exhausted and queue.has_capacity():
                try:
                    value, key = next(elements)
                except StopIteration:
                    exhausted = True
                    break
                added.append(queue.add(value, key))
            if added:
                loop.call_soon_threadsafe(self._start, loop, fn, queue, tasks, watchdog, added)
            for element in queue.pop_ready():
                if element.error is not None:
                    raise element.error
                out.extend(element.results)
            if len(out) >= self._output_batch_rows:
                yield pa.RecordBatch.from_pylist(out, schema=self._schema)
                out = []
            if exhausted and len(queue) == 0:
                break
            if exhausted or not queue.has_capacity():
                queue.wait_ready()
        if out:
            yield pa.RecordBatch.from_pylist(out, schema=self._schema)

    def _start(
        self,
        loop: asyncio.AbstractEventLoop,
        fn: AsyncFunction[dict[str, Any], dict[str, Any]],
        queue: StreamElementQueue,
        tasks: set[asyncio.Task[Sequence[Any]]],
        watchdog: DeadlineWatchdog,
        elements: list[StreamElement],
    ) -> None:
        for element in elements:
            task = loop.create_task(self._process(fn, element))
            tasks.add(task)
            watchdog.watch(task, element)
            task.add_done_callback(partial(_finish, fn, queue, element, tasks))

    async def _process(
        self, fn: AsyncFunction[dict[str, Any], dict[str, Any]], element: StreamElement
    ) -> Sequence[Any]:
        set_current_key(element.key)
        return await self._attempts(fn, element.value)

    async def _attempts(self, fn: AsyncFunction[dict[str, Any], dict[str, Any]], value: Any) -> Sequence[Any]:
        attempt = 1
        while True:
            results: Sequence[Any] | None = None
            error: Exception | None = None
            try:
                results = list(await fn.async_invoke(_fresh(value)))
            except Exception as e:
                error = e
            if not (self._retry.can_retry(attempt) and self._retry.should_retry(results, error)):
                if error is not None:
                    raise error
                assert results is not None
                return results
            logger.debug("attempt %d failed (%r); retrying", attempt, error)
            await asyncio.sleep(self._retry.backoff_s(attempt))
            attempt += 1


def _finish(
    fn: AsyncFunction[dict[str, Any], dict[str, Any]],
    queue: StreamElementQueue,
    element: StreamElement,
    tasks: set[asyncio.Task[Sequence[Any]]],
    task: asyncio.Task[Sequence[Any]],
) -> None:
    # the element's outcome, on the loop thread: its rows, the timeout fallback, or its error
    tasks.discard(task)
    if element.timed_out:
        try:
            queue.complete(element, list(fn.timeout(_fresh(element.value))), None)
        except Exception as e:
            queue.complete(element, (), e)
    elif task.cancelled():
        queue.complete(element, (), asyncio.CancelledError())
    elif (error := task.exception()) is not None:
        queue.complete(element, (), error)
    else:
        queue.complete(element, task.result(), None)


async def _shutdown(tasks: set[asyncio.Task[Sequence[Any]]], watchdog: DeadlineWatchdog) -> None:
    watchdog.close()
    pending = list(tasks)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


def _run(loop: asyncio.AbstractEventLoop, awaitable: Awaitable[T]) -> T:
    async def wrapper() -> T:
        return await awaitable

    future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(wrapper(), loop)
    return future.result(CLOSE_TIMEOUT_S)
