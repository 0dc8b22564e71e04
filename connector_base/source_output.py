"""``SourceOutput``: what a record emitter writes to for one split: records with their timestamps.

A runtime hands ``SourceReader.poll_next`` a ``ReaderOutput``. When that output is an
``EventTimeReaderOutput`` (it makes one split-local output per split, as Flink's
``ReaderOutput.createOutputForSplit``), ``SourceReaderBase`` gives each split's records to that
split's output, so each split has its own watermark generator. Otherwise the records go to the
plain output and timestamps are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from connector_base.event_time.watermark import NO_TIMESTAMP, Watermark
from connector_base.event_time.watermark_output import WatermarkOutput
from connector_base.source_reader import ReaderOutput

__all__ = ["EventTimeReaderOutput", "PlainSourceOutput", "SourceOutput", "SplitLocalOutput"]

T = TypeVar("T")
"""The record type."""
T_contra = TypeVar("T_contra", contravariant=True)
"""The record type (in argument position only)."""


class SourceOutput(WatermarkOutput, Protocol[T_contra]):
    """Records (with the timestamp the source knows, if any) and watermarks of one split."""

    def collect(self, record: T_contra, timestamp: int = NO_TIMESTAMP) -> None:
        """Emit one record; ``timestamp`` is the source's own (a Kafka record's timestamp)."""

    def collect_batch(self, batch: Any, timestamps: Sequence[int] | None = None) -> None:
        """Emit many records at once (an Arrow batch), with one source timestamp per row if known."""


class SplitLocalOutput(SourceOutput[T_contra], Protocol[T_contra]):
    """The output of one split; the reader also tells it whether the split is caught up or paused."""

    def set_caught_up(self, caught_up: bool) -> None:
        """Whether the split has read everything its system holds now (from its split reader)."""

    def set_paused(self, paused: bool) -> None:
        """Whether the split is paused by watermark alignment."""


@runtime_checkable
class EventTimeReaderOutput(Protocol[T_contra]):
    """A reader output with one split-local output per split (Flink's ``ReaderOutput``)."""

    def collect(self, record: T_contra) -> None:
        """Emit one record that belongs to no split in particular."""

    def collect_batch(self, batch: Any) -> None:
        """Emit many records that belong to no split in particular."""

    def create_output_for_split(self, split_id: str) -> SplitLocalOutput[T_contra]:
        """The output of a split that starts now (its own watermark generator)."""

    def release_output_for_split(self, split_id: str) -> None:
        """The split finished: its watermark no longer holds back the reader's."""


class PlainSourceOutput(Generic[T]):
    """A ``SplitLocalOutput`` over a ``ReaderOutput`` that knows no event time: timestamps are dropped.

    ``schema`` is the wrapped output's, if it has one (emitters may build Arrow batches in it).
    """

    __slots__ = ("_output", "schema")

    def __init__(self, output: ReaderOutput[T]) -> None:
        self._output = output
        self.schema: Any = getattr(output, "schema", None)

    def collect(self, record: T, timestamp: int = NO_TIMESTAMP) -> None:
        """Pass the record on; the timestamp is dropped."""
        self._output.collect(record)

    def collect_batch(self, batch: Any, timestamps: Sequence[int] | None = None) -> None:
        """Pass the batch on; the timestamps are dropped."""
        self._output.collect_batch(batch)

    def emit_watermark(self, watermark: Watermark) -> None:
        """Ignored."""

    def mark_idle(self) -> None:
        """Ignored."""

    def mark_active(self) -> None:
        """Ignored."""

    def set_caught_up(self, caught_up: bool) -> None:
        """Ignored."""

    def set_paused(self, paused: bool) -> None:
        """Ignored."""
