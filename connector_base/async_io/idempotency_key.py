"""Idempotency keys: a stable name for an input element, built from its source position.

A failed Spark task is retried from the same input, so the external service may see an element's
call twice. Where the input rows carry their source position (the Kafka, Kinesis and Pravega
sources do), the key names the record, and is the same on every retry: pass it to the service so
that it can drop duplicate writes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from connector_base.errors import InvalidOptionError

__all__ = ["POSITION_COLUMNS", "current_idempotency_key", "resolve_key_columns"]

POSITION_COLUMNS: tuple[tuple[str, ...], ...] = (
    ("topic", "partition", "offset"),
    ("streamName", "shardId", "sequenceNumber"),
    ("scope", "stream", "segment_id", "offset"),
)
"""The source-position columns recognised without being named (Kafka, Kinesis, Pravega)."""

KEY_SEPARATOR = "/"

_current_key: ContextVar[str | None] = ContextVar("async_io_idempotency_key", default=None)


def current_idempotency_key() -> str | None:
    """The key of the element whose ``async_invoke`` is running, or None when the input has no position."""
    return _current_key.get()


def set_current_key(key: str | None) -> None:
    """Set the key for the running element (inside that element's own asyncio task)."""
    _current_key.set(key)


def resolve_key_columns(columns: Sequence[str], requested: Sequence[str] | None) -> tuple[str, ...]:
    """The columns that form the key: ``requested`` (which must exist), else a known position, else none."""
    if requested is not None:
        missing = [c for c in requested if c not in columns]
        if missing or not requested:
            raise InvalidOptionError(
                "idempotency_key_columns",
                list(requested),
                f"a non-empty list of input columns {list(columns)}",
            )
        return tuple(requested)
    for candidate in POSITION_COLUMNS:
        if all(c in columns for c in candidate):
            return candidate
    return ()


def key_of(row: Mapping[str, Any], columns: Sequence[str]) -> str | None:
    """The key of ``row``: its position columns joined by ``/``, or None without key columns."""
    if not columns:
        return None
    return KEY_SEPARATOR.join(str(row[c]) for c in columns)
