"""``ProgressiveTimestampsAndWatermarks``: the event-time ``ReaderOutput`` a runtime gives a reader.

Each split gets a split-local output with the strategy's timestamp assigner and its own watermark
generator; a ``WatermarkOutputMultiplexer`` combines the splits' watermarks into the reader's (the
minimum over splits that are not idle). Records go on to a plain downstream output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from connector_base.event_time.input_activity import RelativeClock, SplitActivity, SystemClock
from connector_base.event_time.timestamp_assigner import TimestampAssigner
from connector_base.event_time.watermark import MAX_WATERMARK, MIN_WATERMARK, NO_TIMESTAMP, Watermark
from connector_base.event_time.watermark_generator import WatermarkGenerator
from connector_base.event_time.watermark_output import WatermarkOutput
from connector_base.event_time.watermark_output_multiplexer import WatermarkOutputMultiplexer
from connector_base.event_time.watermark_strategy import WatermarkStrategy
from connector_base.source_reader import ReaderOutput

__all__ = ["ProgressiveTimestampsAndWatermarks"]

T = TypeVar("T")
"""The record type."""

MAIN_OUTPUT_ID = "\x00reader"
"""The multiplexer id of records emitted without a split."""


class _SplitLocalOutput(Generic[T]):
    """One split: assign timestamps, pass records downstream, feed the split's generator."""

    def __init__(
        self,
        downstream: ReaderOutput[T],
        assigner: TimestampAssigner[T],
        generator: WatermarkGenerator[T],
        immediate: WatermarkOutput,
        deferred: WatermarkOutput,
        activity: SplitActivity,
    ) -> None:
        self._downstream = downstream
        self._assigner = assigner
        self.generator = generator
        self._immediate = immediate
        self.deferred = deferred
        self.activity = activity
        self.schema: Any = getattr(downstream, "schema", None)
        """The downstream output's schema, if it has one (emitters may build batches in it)."""

    def collect(self, record: T, timestamp: int = NO_TIMESTAMP) -> None:
        ts = self._assigner.extract_timestamp(record, timestamp)
        self._downstream.collect(record)
        self.generator.on_event(record, ts, self._immediate)

    def collect_batch(self, batch: Any, timestamps: Sequence[int] | None = None) -> None:
        stamps = self._assigner.extract_timestamps(batch, timestamps)
        self._downstream.collect_batch(batch)
        if len(stamps):
            self.generator.on_batch(batch, stamps, self._immediate)

    def emit_watermark(self, watermark: Watermark) -> None:
        self._immediate.emit_watermark(watermark)

    def mark_idle(self) -> None:
        self._immediate.mark_idle()

    def mark_active(self) -> None:
        self._immediate.mark_active()

    def set_caught_up(self, caught_up: bool) -> None:
        self.activity.set_caught_up(caught_up)

    def set_paused(self, paused: bool) -> None:
        self.activity.set_paused(paused)


class _ReaderWatermark:
    """The combined watermark of the reader, forwarded to an optional listener."""

    def __init__(self, listener: WatermarkOutput | None) -> None:
        self.watermark = MIN_WATERMARK
        self.idle = False
        self._listener = listener

    def emit_watermark(self, watermark: Watermark) -> None:
        if watermark.timestamp <= self.watermark:  # never back (after the end of input, say)
            return
        self.watermark = watermark.timestamp
        self.idle = False
        if self._listener is not None:
            self._listener.emit_watermark(watermark)

    def mark_idle(self) -> None:
        self.idle = True
        if self._listener is not None:
            self._listener.mark_idle()

    def mark_active(self) -> None:
        self.idle = False
        if self._listener is not None:
            self._listener.mark_active()


class ProgressiveTimestampsAndWatermarks(Generic[T]):
    """An ``EventTimeReaderOutput``: per-split generators, combined into the reader's watermark.

    The runtime calls ``emit_periodic_watermark`` every auto-watermark interval. ``listener``
    receives the reader's watermark and idleness changes.

    Threading: the reader's task thread only.
    """

    def __init__(
        self,
        strategy: WatermarkStrategy[T],
        downstream: ReaderOutput[T],
        listener: WatermarkOutput | None = None,
        clock: RelativeClock | None = None,
    ) -> None:
        self._strategy = strategy
        self._downstream = downstream
        self._clock: RelativeClock = clock if clock is not None else SystemClock()
        self._assigner = strategy.create_timestamp_assigner()
        self._reader = _ReaderWatermark(listener)
        self._mux = WatermarkOutputMultiplexer(self._reader)
        self._splits: dict[str, _SplitLocalOutput[T]] = {}
        self._main: _SplitLocalOutput[T] | None = None
        self.schema: Any = getattr(downstream, "schema", None)
        """The downstream output's schema, if it has one."""

    # --- EventTimeReaderOutput ------------------------------------------------------------------
    def collect(self, record: T) -> None:
        """A record of no particular split (it has the reader-wide generator)."""
        self._main_output().collect(record)

    def collect_batch(self, batch: Any) -> None:
        """Records of no particular split."""
        self._main_output().collect_batch(batch)

    def create_output_for_split(self, split_id: str) -> _SplitLocalOutput[T]:
        """A split-local output with its own generator; the split holds back the reader from now on."""
        existing = self._splits.get(split_id)
        if existing is not None:
            return existing
        output = self._new_output(split_id)
        self._splits[split_id] = output
        return output

    def release_output_for_split(self, split_id: str) -> None:
        """The split finished: its last watermark is emitted, then it no longer counts."""
        output = self._splits.pop(split_id, None)
        if output is not None:
            output.generator.on_periodic_emit(output.deferred)
            self._mux.on_periodic_emit()
            self._mux.unregister_output(split_id)

    def emit_final_watermark(self) -> None:
        """The input ended: the reader's watermark goes to ``MAX_WATERMARK`` (as Flink's at end of input)."""
        if self._reader.watermark != MAX_WATERMARK:
            self._reader.emit_watermark(Watermark(MAX_WATERMARK))

    def _main_output(self) -> _SplitLocalOutput[T]:
        if self._main is None:
            self._main = self._new_output(MAIN_OUTPUT_ID)
            self._main.set_caught_up(True)
        return self._main

    def _new_output(self, output_id: str) -> _SplitLocalOutput[T]:
        activity = SplitActivity(self._clock)
        self._mux.register_new_output(output_id)
        return _SplitLocalOutput(
            self._downstream,
            self._assigner,
            self._strategy.create_watermark_generator(activity),
            self._mux.get_immediate_output(output_id),
            self._mux.get_deferred_output(output_id),
            activity,
        )

    # --- for the runtime ------------------------------------------------------------------------
    def emit_periodic_watermark(self) -> None:
        """Let every generator emit, then combine (call every auto-watermark interval)."""
        if self._main is not None:
            self._main.generator.on_periodic_emit(self._main.deferred)
        for output in self._splits.values():
            output.generator.on_periodic_emit(output.deferred)
        self._mux.on_periodic_emit()

    @property
    def current_watermark(self) -> int:
        """The reader's watermark (``MIN_WATERMARK`` before any)."""
        return self._reader.watermark

    @property
    def is_idle(self) -> bool:
        """Whether every split is idle (or there is none)."""
        return self._mux.is_idle

    def split_watermarks(self) -> dict[str, int]:
        """Each live split's own watermark."""
        marks = self._mux.watermarks()
        marks.pop(MAIN_OUTPUT_ID, None)
        return marks

    def idle_splits(self) -> set[str]:
        """The live splits that are idle."""
        return self._mux.idle_outputs() - {MAIN_OUTPUT_ID}
