"""``TimestampAssigner``: the event time of a record, in epoch milliseconds."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import override

from connector_base.event_time.watermark import NO_TIMESTAMP

__all__ = ["ColumnTimestampAssigner", "RecordTimestampAssigner", "TimestampAssigner"]

T_contra = TypeVar("T_contra", contravariant=True)
"""The record type."""

_MS_PER_UNIT = {"s": 1000.0, "ms": 1.0, "us": 0.001, "ns": 0.000001}


def _rows(batch: Any) -> list[Any]:
    columns = getattr(batch, "columns", None)
    if columns is not None and hasattr(batch, "num_rows"):
        return list(zip(*[c.to_pylist() for c in columns], strict=True)) if batch.num_rows else []
    return list(batch)


class TimestampAssigner(ABC, Generic[T_contra]):
    """Gives each record its event time.

    ``record_timestamp`` is the timestamp the source attached (a Kafka record's timestamp), or
    ``NO_TIMESTAMP``. Called on the reader's task thread.
    """

    @abstractmethod
    def extract_timestamp(self, element: T_contra, record_timestamp: int) -> int:
        """The event time of ``element``."""

    def extract_timestamps(self, batch: Any, record_timestamps: Sequence[int] | None) -> Sequence[int]:
        """The event times of the rows of a batch (an Arrow batch or a sequence of records).

        The default calls ``extract_timestamp`` per row; override it for a vectorised assigner.
        """
        rows = _rows(batch)
        stamps = record_timestamps if record_timestamps is not None else [NO_TIMESTAMP] * len(rows)
        extract = self.extract_timestamp
        return [extract(row, ts) for row, ts in zip(rows, stamps, strict=True)]


class RecordTimestampAssigner(TimestampAssigner[Any]):
    """The timestamp the source attached to each record (the default of a ``WatermarkStrategy``)."""

    @override
    def extract_timestamp(self, element: Any, record_timestamp: int) -> int:
        return record_timestamp

    @override
    def extract_timestamps(self, batch: Any, record_timestamps: Sequence[int] | None) -> Sequence[int]:
        if record_timestamps is not None:
            return record_timestamps
        return [NO_TIMESTAMP] * len(_rows(batch))


class ColumnTimestampAssigner(TimestampAssigner[Any]):
    """The value of one column: an Arrow timestamp column, or integers in epoch milliseconds.

    Records that are tuples are read at ``index`` (required for them); Arrow batches by ``column``.
    """

    def __init__(self, column: str, index: int | None = None) -> None:
        if not column:
            raise ValueError("ColumnTimestampAssigner needs a column name")
        self.column = column
        self.index = index

    @override
    def extract_timestamp(self, element: Any, record_timestamp: int) -> int:
        if self.index is None:
            raise ValueError(
                f"ColumnTimestampAssigner({self.column!r}) got a single record: give the column's index"
            )
        value = element[self.index]
        return NO_TIMESTAMP if value is None else _to_ms(value)

    @override
    def extract_timestamps(self, batch: Any, record_timestamps: Sequence[int] | None) -> Sequence[int]:
        if not hasattr(batch, "schema"):
            return super().extract_timestamps(batch, record_timestamps)
        import pyarrow as pa

        position = batch.schema.get_field_index(self.column)
        if position < 0:
            raise ValueError(
                f"timestamp column {self.column!r} is not in the records; columns: {batch.schema.names}"
            )
        array = batch.column(position)
        if pa.types.is_timestamp(array.type):
            factor = _MS_PER_UNIT[array.type.unit]
            raw = array.cast(pa.int64())
            return [NO_TIMESTAMP if v is None else int(v * factor) for v in raw.to_pylist()]
        return [NO_TIMESTAMP if v is None else int(v) for v in array.to_pylist()]


def _to_ms(value: Any) -> int:
    timestamp = getattr(value, "timestamp", None)
    if callable(timestamp):  # a datetime
        return int(timestamp() * 1000)
    return int(value)
