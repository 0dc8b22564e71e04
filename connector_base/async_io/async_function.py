"""``AsyncFunction``: what users implement to call an external service for each input element."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Generic, TypeVar

from typing_extensions import override

from connector_base.async_io.result_future import ResultFuture
from connector_base.errors import ConnectorError

__all__ = ["AsyncFunction", "AsyncTimeoutError", "CallbackAsyncFunction"]

IN = TypeVar("IN")
"""The type of one input element (a dict of the input row's columns, for the Spark drivers)."""
OUT = TypeVar("OUT")
"""The type of one output row (a dict matching the output schema, for the Spark drivers)."""


class AsyncTimeoutError(ConnectorError, TimeoutError):
    """An element did not complete, retries included, within the operator's timeout."""


class AsyncFunction(ABC, Generic[IN, OUT]):
    """Asynchronous work for each input element, e.g. a lookup in a database or an HTTP call.

    Lifecycle, per Spark task: ``open()``, then ``async_invoke`` for every element (up to the
    operator's capacity at a time), ``timeout`` for elements that ran out of time, then ``close()``.
    ``open`` and ``close`` are coroutines because asyncio clients must be created and closed on the
    loop that uses them. The instance is pickled to the executors: create clients in ``open``.

    Calls are at least once: a failed Spark task is retried from its input, so an element whose call
    succeeded may be called again (see ``current_idempotency_key``).
    """

    async def open(self) -> None:
        """Create clients; runs on the worker's event loop before the first element."""

    @abstractmethod
    async def async_invoke(self, value: IN) -> Sequence[OUT]:
        """The output rows for ``value`` (zero or more); an exception fails or retries the element.

        ``value`` belongs to this element alone: no other element or attempt shares it.
        """

    def timeout(self, value: IN) -> Sequence[OUT]:
        """The output for an element that timed out; by default the element fails the task.

        Override to emit a fallback (for instance a row with null enrichment columns).
        """
        raise AsyncTimeoutError(f"async_invoke did not complete within the timeout for {value!r}")

    async def close(self) -> None:
        """Close clients; runs on the worker's event loop after the last element of the task."""


class CallbackAsyncFunction(AsyncFunction[IN, OUT]):
    """An ``AsyncFunction`` written in Flink's callback style: ``invoke`` completes a ``ResultFuture``.

    Suits clients that report completion through callbacks (possibly on their own threads).
    """

    @abstractmethod
    def invoke(self, value: IN, result_future: ResultFuture[OUT]) -> None:
        """Start the work for ``value``; complete ``result_future`` once, now or later."""

    @override
    async def async_invoke(self, value: IN) -> Sequence[OUT]:
        result_future: ResultFuture[OUT] = ResultFuture(asyncio.get_running_loop())
        self.invoke(value, result_future)
        return await result_future.wait()
