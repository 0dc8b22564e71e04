"""``ordered_wait`` and ``unordered_wait``: Flink's ``AsyncDataStream`` for Spark DataFrames."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from connector_base.async_io.async_function import AsyncFunction
from connector_base.async_io.async_wait_operator import AsyncWaitOperator
from connector_base.async_io.idempotency_key import resolve_key_columns
from connector_base.async_io.retry_strategy import AsyncRetryStrategy
from connector_base.errors import InvalidOptionError

__all__ = ["DEFAULT_OUTPUT_BATCH_ROWS", "ordered_wait", "unordered_wait"]

DEFAULT_OUTPUT_BATCH_ROWS = 8192


def ordered_wait(
    df: Any,
    fn: AsyncFunction[dict[str, Any], dict[str, Any]],
    schema: Any,
    *,
    timeout: float,
    capacity: int,
    retry: AsyncRetryStrategy | None = None,
    idempotency_key_columns: Sequence[str] | None = None,
    output_batch_rows: int = DEFAULT_OUTPUT_BATCH_ROWS,
) -> Any:
    """``df`` with ``fn`` applied to every row, output rows in input order.

    ``fn`` gets each row as a dict and returns dicts matching ``schema`` (a ``StructType`` or a DDL
    string). ``timeout`` (seconds) bounds each element, retries included; ``capacity`` bounds the
    elements in flight per task. Works on batch and streaming DataFrames alike.
    """
    return _async_wait(
        df, fn, schema, True, timeout, capacity, retry, idempotency_key_columns, output_batch_rows
    )


def unordered_wait(
    df: Any,
    fn: AsyncFunction[dict[str, Any], dict[str, Any]],
    schema: Any,
    *,
    timeout: float,
    capacity: int,
    retry: AsyncRetryStrategy | None = None,
    idempotency_key_columns: Sequence[str] | None = None,
    output_batch_rows: int = DEFAULT_OUTPUT_BATCH_ROWS,
) -> Any:
    """Like ``ordered_wait``, but output rows leave in completion order (within each task)."""
    return _async_wait(
        df, fn, schema, False, timeout, capacity, retry, idempotency_key_columns, output_batch_rows
    )


def _async_wait(
    df: Any,
    fn: AsyncFunction[dict[str, Any], dict[str, Any]],
    schema: Any,
    ordered: bool,
    timeout: float,
    capacity: int,
    retry: AsyncRetryStrategy | None,
    key_columns: Sequence[str] | None,
    output_batch_rows: int,
) -> Any:
    from pyspark.sql.types import StructType

    from connector_base.spark import to_arrow_schema

    if not isinstance(fn, AsyncFunction):
        raise InvalidOptionError("fn", type(fn).__name__, "an AsyncFunction instance")
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise InvalidOptionError("timeout", timeout, "a finite number of seconds > 0")
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        raise InvalidOptionError("capacity", capacity, "an integer >= 1")
    if isinstance(output_batch_rows, bool) or not isinstance(output_batch_rows, int) or output_batch_rows < 1:
        raise InvalidOptionError("output_batch_rows", output_batch_rows, "an integer >= 1")
    struct = StructType.fromDDL(schema) if isinstance(schema, str) else schema
    if not isinstance(struct, StructType):
        raise InvalidOptionError("schema", schema, "a StructType or a DDL string")
    operator = AsyncWaitOperator(
        fn,
        to_arrow_schema(struct),
        ordered=ordered,
        timeout_s=float(timeout),
        capacity=capacity,
        retry=retry or AsyncRetryStrategy.no_retry(),
        key_columns=resolve_key_columns(df.columns, key_columns),
        output_batch_rows=output_batch_rows,
    )
    return df.mapInArrow(operator, struct)
