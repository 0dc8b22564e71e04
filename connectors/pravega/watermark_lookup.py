"""``PravegaWatermarkLookup``: the event-time cut from the streams' watermarks (``eventTime.cutFrom``).

The driver reads no event: each stream's watermarks (:class:`~connectors.pravega.watermarks.WatermarkReader`)
say that every event older than a watermark's lower bound ``L`` lies before its stream cut. So a
micro-batch can end at a watermark's cut and record ``L`` as its cut time ``T``:

* a segment's available end is clamped to the newest watermark's cut (``clamp``): nothing past the
  newest watermark is planned, since its time is not known;
* a segment's head at ``end`` is ``L - 1`` of the newest watermark whose cut in that segment is at or
  before ``end`` (reading to ``end`` delivers everything older than ``L``);
* the position by time ``t`` is the cut, in that segment, of the oldest watermark with ``L >= t``;
* the time at a position is ``L - 1`` of the first watermark whose cut lies past it.

With these answers :class:`~connector_base.spark.event_time_cut.EventTimeCut` ends every batch at a
watermark's stream cut (a read limit may trim it) and logs that watermark's lower bound as ``T``.

A segment a watermark's cut does not name is either before it (a predecessor of the cut's segments:
read to its end) or after it (a successor: nothing of it yet); the segment's epoch tells which.

Threading: the driver's stream-reader thread only.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping

from connector_base.spark import Position
from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.split import PravegaSegmentSplit
from connectors.pravega.watermarks import PravegaWatermark, WatermarkReader, position_in

__all__ = ["PravegaWatermarkLookup"]


class PravegaWatermarkLookup:
    """Answers ``SplitPlanner``'s event-time hooks from the streams' watermarks (see the module docstring)."""

    def __init__(self, cluster: Callable[[], PravegaClusterClient]) -> None:
        self._cluster = cluster
        self._readers: dict[tuple[str, str], WatermarkReader] = {}
        self._positions: dict[tuple[str, str], dict[int, int]] = {}
        """Each stream's segment positions as the last trigger planned them (``clamp``)."""

    def _marks(self, split: PravegaSegmentSplit) -> list[PravegaWatermark]:
        reader = self._readers.get((split.scope, split.stream))
        return [] if reader is None else reader.watermarks

    def refresh(self, streams: set[tuple[str, str]]) -> None:
        """Drop the watermarks the last trigger's positions no longer need, then read the ones written
        since the last refresh (once per trigger). Later batches start at or after those positions,
        so what is kept stays bounded by the watermarks from the slowest split on."""
        for scope, stream in streams:
            reader = self._readers.get((scope, stream))
            if reader is None:
                reader = self._readers[(scope, stream)] = WatermarkReader(scope, stream, self._cluster)
            positions = self._positions.pop((scope, stream), None)
            if positions:
                reader.prune(positions)
            reader.poll()

    def clamp(self, split: PravegaSegmentSplit, pos: int, end: int) -> int:
        """``end`` moved back to the newest watermark's cut (never before ``pos``); notes ``pos`` for
        the next refresh's pruning (every split of a trigger passes here, except those held back)."""
        self._positions.setdefault((split.scope, split.stream), {})[split.segment_id] = pos
        marks = self._marks(split)
        limit = position_in(marks[-1], split.segment_id) if marks else pos
        return max(pos, min(end, limit))

    def watermark_times(self) -> dict[str, dict[str, int]]:
        """The newest watermark's bounds per stream (for logs and tests)."""
        return {
            f"{scope}/{stream}": {"lower": r.watermarks[-1].lower_ms, "upper": r.watermarks[-1].upper_ms}
            for (scope, stream), r in self._readers.items()
            if r.watermarks
        }

    # --- the planner's bookkeeping (nothing to keep: watermarks are durable in the mark stream) ----
    def note_current(self, current: Mapping[str, tuple[int, int]]) -> None:
        """Nothing to do: the heads come from the watermarks, not from this driver's reads."""

    def note_split_times(self, times: Mapping[str, tuple[int, int]]) -> None:
        """Nothing to do: a restarted driver reads the same watermarks again."""

    def use_limits(self, max_events: int | None, max_bytes: int | None) -> None:
        """Nothing to do: no window is scanned."""

    # --- SplitPlanner's event-time hooks ----------------------------------------------------------
    def positions_at_time(
        self, ranges: Mapping[str, tuple[PravegaSegmentSplit, Position, Position]], t_ms: int
    ) -> dict[str, Position]:
        """The cut of the oldest watermark whose lower bound is ``>= t_ms`` (the newest one's when none)."""
        out: dict[str, Position] = {}
        for sid, (split, raw_start, raw_end) in ranges.items():
            start, end = int(raw_start), int(raw_end)
            marks = self._marks(split)
            if not marks:
                out[sid] = start
                continue
            i = min(bisect.bisect_left([m.lower_ms for m in marks], t_ms), len(marks) - 1)
            out[sid] = min(max(position_in(marks[i], split.segment_id), start), end)
        return out

    def times_at(
        self, positions: Mapping[str, tuple[PravegaSegmentSplit, Position]]
    ) -> dict[str, int | None]:
        """``L - 1`` of the first watermark whose cut lies past each position (``None``: none yet)."""
        out: dict[str, int | None] = {}
        for sid, (split, raw_pos) in positions.items():
            pos = int(raw_pos)
            out[sid] = next(
                (m.lower_ms - 1 for m in self._marks(split) if position_in(m, split.segment_id) > pos), None
            )
        return out

    def head_times(self, ends: Mapping[str, tuple[PravegaSegmentSplit, Position]]) -> dict[str, int | None]:
        """``L - 1`` of the newest watermark whose cut is at or before each end (``None``: none)."""
        out: dict[str, int | None] = {}
        for sid, (split, raw_end) in ends.items():
            end = int(raw_end)
            out[sid] = next(
                (
                    m.lower_ms - 1
                    for m in reversed(self._marks(split))
                    if position_in(m, split.segment_id) <= end
                ),
                None,
            )
        return out
