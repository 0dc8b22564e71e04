"""Async I/O for PySpark: Flink's asynchronous I/O operator on ``mapInArrow``.

Enrich every row of a batch or streaming DataFrame from an external service with many calls in
flight per task: ``ordered_wait(df, fn, schema, timeout=..., capacity=...)`` or ``unordered_wait``,
with ``fn`` an ``AsyncFunction`` (or a ``CallbackAsyncFunction`` completing a ``ResultFuture``) and
FLIP-232 retries (``AsyncRetryStrategy``). Guarantees and limits: docs/async-io.md.
"""

from connector_base.async_io.async_data_stream import DEFAULT_OUTPUT_BATCH_ROWS, ordered_wait, unordered_wait
from connector_base.async_io.async_function import AsyncFunction, AsyncTimeoutError, CallbackAsyncFunction
from connector_base.async_io.async_wait_operator import AsyncWaitOperator
from connector_base.async_io.event_loop import worker_event_loop
from connector_base.async_io.idempotency_key import POSITION_COLUMNS, current_idempotency_key
from connector_base.async_io.ordered_queue import OrderedStreamElementQueue
from connector_base.async_io.result_future import ResultFuture
from connector_base.async_io.retry_strategy import AsyncRetryStrategy, empty_result, has_exception
from connector_base.async_io.stream_element_queue import StreamElement, StreamElementQueue
from connector_base.async_io.unordered_queue import UnorderedStreamElementQueue

__all__ = [
    "DEFAULT_OUTPUT_BATCH_ROWS",
    "POSITION_COLUMNS",
    "AsyncFunction",
    "AsyncRetryStrategy",
    "AsyncTimeoutError",
    "AsyncWaitOperator",
    "CallbackAsyncFunction",
    "OrderedStreamElementQueue",
    "ResultFuture",
    "StreamElement",
    "StreamElementQueue",
    "UnorderedStreamElementQueue",
    "current_idempotency_key",
    "empty_result",
    "has_exception",
    "ordered_wait",
    "unordered_wait",
    "worker_event_loop",
]
