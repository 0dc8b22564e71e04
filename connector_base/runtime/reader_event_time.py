"""``ReaderEventTime``: a local-runtime reader's watermarks, periodic emission and split alignment."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from connector_base.errors import UnsupportedOperationError
from connector_base.event_time.input_activity import RelativeClock, SystemClock
from connector_base.event_time.progressive_timestamps_and_watermarks import (
    ProgressiveTimestampsAndWatermarks,
)
from connector_base.event_time.watermark import MAX_WATERMARK, MIN_WATERMARK, Watermark
from connector_base.event_time.watermark_strategy import WatermarkStrategy
from connector_base.source_reader import ReaderOutput, SourceReader
from connector_base.split_reader import ALLOW_UNALIGNED_SOURCE_SPLITS_KEY

__all__ = ["DEFAULT_AUTO_WATERMARK_INTERVAL_MS", "ReaderEventTime"]

LOG = logging.getLogger(__name__)

T = TypeVar("T")
"""The record type."""

DEFAULT_AUTO_WATERMARK_INTERVAL_MS = 200
"""How often generators are asked to emit (Flink's ``pipeline.auto-watermark-interval``)."""


class _WatermarkLog:
    """The reader's watermark and idleness as they change (read by other threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.watermark = MIN_WATERMARK
        self.idle = False
        self.history: list[int | str] = []

    def emit_watermark(self, watermark: Watermark) -> None:
        with self.lock:
            self.watermark = watermark.timestamp
            self.idle = False
            self.history.append(watermark.timestamp)

    def mark_idle(self) -> None:
        with self.lock:
            self.idle = True
            self.history.append("idle")

    def mark_active(self) -> None:
        with self.lock:
            self.idle = False
            self.history.append("active")


class ReaderEventTime(Generic[T]):
    """Wraps a reader's output in per-split watermarking and drives it from the reader thread.

    ``tick`` (called between polls) asks the generators to emit every auto-watermark interval
    and, with alignment, hands ``report`` the reader's watermark every update interval. The
    coordinator answers with ``apply_max_allowed``: splits whose watermark is beyond it are paused
    (``SourceReader.pause_or_resume_splits``), paused splits at or below it resume. The whole
    reader is aligned too, as Flink's source operator does: ``blocked`` is true while the reader's
    watermark is beyond what the others allow, and the runtime stops polling it (its fetchers stop
    at the full queue). That is what still aligns a reader whose split reader cannot pause, with
    ``pipeline.watermark-alignment.allow-unaligned-source-splits`` set.

    Threading: ``output``, ``tick`` and ``apply_max_allowed`` run on the reader thread; the
    ``*_snapshot`` accessors and ``watermark`` may be read from any thread.
    """

    def __init__(
        self,
        strategy: WatermarkStrategy[T],
        downstream: ReaderOutput[T],
        reader: SourceReader[T, Any],
        report: Callable[[int, bool], None] | None,
        config: dict[str, Any],
        auto_watermark_interval_ms: int = DEFAULT_AUTO_WATERMARK_INTERVAL_MS,
        clock: RelativeClock | None = None,
    ) -> None:
        self._clock: RelativeClock = clock if clock is not None else SystemClock()
        self._log = _WatermarkLog()
        self.output: ProgressiveTimestampsAndWatermarks[T] = ProgressiveTimestampsAndWatermarks(
            strategy, downstream, self._log, self._clock
        )
        self._reader = reader
        self._report = report if strategy.alignment is not None else None
        self._interval_ms = auto_watermark_interval_ms
        self._update_ms = strategy.alignment.update_interval_ms if strategy.alignment is not None else 0
        self._drift_ms = strategy.alignment.max_drift_ms if strategy.alignment is not None else 0
        now = self._clock.relative_time_ms()
        self._next_emit = now + auto_watermark_interval_ms
        self._next_report = now + self._update_ms
        self._allow_unaligned = str(config.get(ALLOW_UNALIGNED_SOURCE_SPLITS_KEY, "false")).lower() == "true"
        self._split_alignment = True
        self.blocked = False
        """Whole-reader alignment: the runtime does not poll the reader now."""
        self.blocks = 0
        """How many times the whole reader was blocked (for tests and logs)."""
        self._paused: set[str] = set()
        self._lock = threading.Lock()
        self._split_marks: dict[str, int] = {}
        self._idle_splits: set[str] = set()
        self.max_allowed = MAX_WATERMARK
        self.pauses = 0
        """How many times a split was paused (for tests and logs)."""
        self.resumes = 0
        """How many times a split was resumed."""

    def tick(self) -> None:
        """Periodic emission and alignment reports, when due."""
        now = self._clock.relative_time_ms()
        if now >= self._next_emit:
            self._next_emit = now + self._interval_ms
            self.output.emit_periodic_watermark()
            with self._lock:
                self._split_marks = self.output.split_watermarks()
                self._idle_splits = self.output.idle_splits()
        if self._report is not None and now >= self._next_report:
            self._next_report = now + self._update_ms
            with self._log.lock:
                watermark, idle = self._log.watermark, self._log.idle
            self._report(watermark, idle or self.output.is_idle)

    def end_of_input(self) -> None:
        """The reader finished: its watermark becomes ``MAX_WATERMARK`` (reader thread)."""
        self.output.emit_final_watermark()

    def apply_max_allowed(self, allowed_by_others: int) -> None:
        """Pause splits beyond the max allowed watermark; resume paused ones that are not (reader thread)."""
        max_allowed = allowed_by_others
        own = self.output.current_watermark
        if not self.output.is_idle and own != MIN_WATERMARK:  # no watermark yet: no constraint of its own
            max_allowed = min(max_allowed, own + self._drift_ms)
        self.max_allowed = max_allowed
        self._block_reader(own, allowed_by_others)
        if not self._split_alignment:
            return
        marks = self.output.split_watermarks()
        with self._lock:
            self._paused &= marks.keys()  # finished splits are gone
        pause = [sid for sid, wm in marks.items() if wm > max_allowed and sid not in self._paused]
        resume = [sid for sid in self._paused if marks[sid] <= max_allowed]
        if not pause and not resume:
            return
        try:
            self._reader.pause_or_resume_splits(pause, resume)
        except UnsupportedOperationError:
            if not self._allow_unaligned:
                raise
            LOG.warning(
                "%s cannot pause splits: its splits stay unaligned (the whole reader is aligned)",
                type(self._reader).__name__,
            )
            self._split_alignment = False
            return
        with self._lock:
            self._paused.update(pause)
            self._paused.difference_update(resume)
        self.pauses += len(pause)
        self.resumes += len(resume)
        LOG.debug("alignment at %d: paused %s, resumed %s", max_allowed, pause, resume)

    def _block_reader(self, own: int, allowed_by_others: int) -> None:
        """Whole-reader alignment: stop polling while this reader's watermark is beyond the others'."""
        blocked = not self.output.is_idle and own != MIN_WATERMARK and own > allowed_by_others
        if blocked and not self.blocked:
            self.blocks += 1
        self.blocked = blocked

    @property
    def watermark(self) -> int:
        """The reader's watermark (``MIN_WATERMARK`` before any)."""
        with self._log.lock:
            return self._log.watermark

    def history_snapshot(self) -> list[int | str]:
        """The reader's watermarks and idle/active changes, in order."""
        with self._log.lock:
            return list(self._log.history)

    def paused_snapshot(self) -> set[str]:
        """The splits paused by alignment now."""
        with self._lock:
            return set(self._paused)

    def idle_splits_snapshot(self) -> set[str]:
        """The live splits that were idle at the last periodic emission."""
        with self._lock:
            return set(self._idle_splits)

    def split_watermarks_snapshot(self) -> dict[str, int]:
        """Each live split's watermark, as of the last periodic emission."""
        with self._lock:
            return dict(self._split_marks)
