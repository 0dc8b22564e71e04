"""``PravegaSegmentPlanner``: plans ``[start, end)`` byte ranges per segment on the Spark driver.

* The end of an open segment's range is its tail (``GetStreamSegmentInfo``); a split with an end
  stream cut stops there. Tails are always event boundaries (the store appends whole events).
* A successor's range stays empty while any of its predecessors is still in the plan, so it is
  read in a later micro-batch than the end of its predecessors (order per routing key holds).
  Batch reads plan everything at once and have no order to keep.
* A segment is finished when it is sealed and the position is its length (or its end offset).
* ``maxEventsPerTrigger`` / ``maxBytesPerTrigger`` need cuts at event boundaries: the planner
  reads the event headers of at most the admitted range from the segment store to find them, and
  counts events up to the limit the bridge says is in force (``use_read_limits``: the larger
  ``backlog.*`` maxima and entry thresholds when set).
* ``eventTime.alignment=cut``: the event-time hooks read event times from the segments within one
  batch's window, and the event counts come from that same scan (event_time_lookup.py); with
  ``eventTime.cutFrom=watermarks`` they answer from the streams' watermarks instead, and each
  segment's end is clamped to the newest watermark's stream cut (watermark_lookup.py).
* Truncation seen here fails the query (``failOnDataLoss=true``) naming the segment and offsets,
  or is logged, and the executor then skips to the head.

Threading: the driver's stream-reader thread only.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Mapping
from typing import Any

from typing_extensions import override

from connector_base import ConnectorError, DataLossError
from connector_base.spark import Backlog, Position, ReadLimitOptions, SplitPlanner
from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.enumerator import PravegaEnumeratorState
from connectors.pravega.event_decoding import EVENT_HEADER_BYTES, event_boundaries
from connectors.pravega.event_time import CutFrom, EventTimeExtractor
from connectors.pravega.event_time_lookup import PravegaEventTimeLookup
from connectors.pravega.options import PravegaSourceOptions
from connectors.pravega.restore_check import check_pravega_restore
from connectors.pravega.segment_store_client import MAX_READ_BYTES, NoSuchSegmentError
from connectors.pravega.split import PravegaSegmentSplit
from connectors.pravega.watermark_lookup import PravegaWatermarkLookup

__all__ = ["PravegaSegmentPlanner"]

LOG = logging.getLogger(__name__)

SCAN_CHUNK_BYTES = 4 * MAX_READ_BYTES


class PravegaSegmentPlanner(SplitPlanner[PravegaSegmentSplit]):
    """See the module docstring."""

    def __init__(
        self, options: PravegaSourceOptions, event_time: EventTimeExtractor | None = None, cut: bool = False
    ) -> None:
        self.options = options
        self._client: PravegaClusterClient | None = None
        self._sealed: dict[str, int] = {}
        self._gone: set[str] = set()
        self._scans: dict[tuple[str, int], list[int]] = {}
        self._count_events = options.max_events_per_trigger
        """How many events ``backlog`` counts (+ 1): the limit in force, set by ``use_read_limits``."""
        self.event_times = (
            None
            if event_time is None
            else PravegaEventTimeLookup(
                event_time, self._cluster, options.max_events_per_trigger, options.max_bytes_per_trigger
            )
        )
        self.watermarks = (
            PravegaWatermarkLookup(self._cluster) if cut and options.cut_from is CutFrom.WATERMARKS else None
        )

    def check_restored(
        self, enumerator_state: PravegaEnumeratorState, splits: Mapping[str, PravegaSegmentSplit]
    ) -> set[str]:
        """A restored offset must hold only the streams the options name (see restore_check)."""
        return check_pravega_restore(self.options, enumerator_state, splits)

    @override
    def open(self) -> None:
        self._client = PravegaClusterClient(self.options.connection)

    @override
    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _cluster(self) -> PravegaClusterClient:
        if self._client is None:
            self.open()
        assert self._client is not None
        return self._client

    @override
    def start_position(self, split: PravegaSegmentSplit) -> Position:
        return split.start_offset

    @override
    def end_positions(
        self, splits: Mapping[str, tuple[PravegaSegmentSplit, Position]]
    ) -> dict[str, Position]:
        return self._ends(splits, hold=self.options.streaming)

    @override
    def target_positions(
        self, splits: Mapping[str, tuple[PravegaSegmentSplit, Position]]
    ) -> dict[str, Position]:
        return self._ends(splits, hold=False)

    def _ends(
        self, splits: Mapping[str, tuple[PravegaSegmentSplit, Position]], hold: bool
    ) -> dict[str, Position]:
        self._scans.clear()
        ends: dict[str, Position] = {}
        if self.watermarks is not None:
            self.watermarks.refresh({(split.scope, split.stream) for split, _pos in splits.values()})
        for sid, (split, raw_pos) in splits.items():
            pos = int(raw_pos)
            if hold and any(p in splits for p in split.predecessor_ids()):
                ends[sid] = pos  # a predecessor is still being read
                continue
            if sid in self._gone:
                ends[sid] = pos
                continue
            try:
                info = self._cluster().info(split.scope, split.stream, split.segment_id)
            except NoSuchSegmentError:
                self._lost(split, pos, None, "the segment no longer exists")
                ends[sid] = pos
                continue
            if info.sealed:
                self._sealed[sid] = info.tail
            end = info.tail if not split.is_bounded else min(split.end_offset, info.tail)
            if info.head > pos and pos < end:
                self._lost(split, pos, info.head, f"the segment was truncated at offset {info.head}")
            ends[sid] = max(pos, end)
            if self.watermarks is not None:  # nothing past the newest watermark: its time is unknown
                ends[sid] = self.watermarks.clamp(split, pos, int(ends[sid]))
        if self.event_times is not None:
            self.event_times.note_current({sid: (int(p), int(ends[sid])) for sid, (_s, p) in splits.items()})
        return ends

    def _lost(self, split: PravegaSegmentSplit, pos: int, head: int | None, why: str) -> None:
        to = "" if head is None else f" to {head}"
        message = (
            f"data loss in segment {split.segment_name} (id {split.segment_id}) of stream "
            f"{split.scope}/{split.stream}: offsets from {pos}{to} are no longer available ({why})"
        )
        if self.options.fail_on_data_loss:
            raise DataLossError(message + ". Set failOnDataLoss=false to skip to the head and continue.")
        LOG.warning("%s; continuing (failOnDataLoss=false)", message)
        if head is None:
            self._gone.add(split.split_id)

    # --- admission control ----------------------------------------------------------------------
    def _scan(
        self, split: PravegaSegmentSplit, start: int, end: int, max_events: int | None, max_bytes: int | None
    ) -> list[int]:
        """Event boundaries from ``start``, up to ``max_events`` events or past ``start + max_bytes``."""
        if self.event_times is not None:  # the cut's scan, read once across batches
            return self.event_times.boundaries(split, start, end, max_events, max_bytes)
        key = (split.split_id, start)
        cached = self._scans.get(key)
        stop = end if max_bytes is None else min(end, start + max_bytes)
        if cached is not None and (
            cached[-1] >= stop or (max_events is not None and len(cached) - 1 >= max_events)
        ):
            return cached
        bounds = [start]
        pos = start
        client = self._cluster()
        while pos < stop and (max_events is None or len(bounds) - 1 < max_events):
            upto = min(end, pos + SCAN_CHUNK_BYTES)
            data = client.read_bytes(split.scope, split.stream, split.segment_id, pos, upto)
            found = event_boundaries(data, pos, split.segment_name)
            if len(found) == 1:  # an event larger than the chunk: jump over it
                length = int.from_bytes(data[4:8], "big")
                pos += EVENT_HEADER_BYTES + length
                bounds.append(pos)
                continue
            bounds.extend(found[1:])
            pos = found[-1]
        self._scans[key] = bounds
        return bounds

    @override
    def backlog(self, split: PravegaSegmentSplit, start: Position, end: Position) -> Backlog:
        s, e = int(start), int(end)
        if e <= s:
            return Backlog(records=0, bytes=0)
        records = None
        if self._count_events is not None:
            cap = self._count_events + 1
            bounds = self._scan(split, s, e, cap, None)  # a cached scan may run past ``e``
            records = min(cap, bisect.bisect_right(bounds, e) - 1)
        return Backlog(records=records, bytes=e - s)

    @override
    def use_read_limits(self, limits: ReadLimitOptions | None) -> None:
        max_events, max_bytes = (None, None) if limits is None else (limits.max_records, limits.max_bytes)
        self._count_events = max_events
        if self.event_times is not None:  # the cut's scan window follows the same limits
            self.event_times.use_limits(max_events, max_bytes)

    @override
    def cut(
        self,
        split: PravegaSegmentSplit,
        start: Position,
        end: Position,
        max_records: int | None,
        max_bytes: int | None,
    ) -> Position:
        s, e = int(start), int(end)
        if e <= s or (max_records is None and max_bytes is None):
            return e
        if (max_records is not None and max_records <= 0) or (max_bytes is not None and max_bytes <= 0):
            return s
        bounds = self._scan(split, s, e, max_records, max_bytes)
        allowed = [b for b in bounds if b <= e]
        if max_bytes is not None:
            within = [b for b in allowed if b - s <= max_bytes]
            allowed = within if len(within) > 1 else allowed[:2]  # at least one event
        if max_records is not None:
            allowed = allowed[: max_records + 1]
        return max(allowed)

    @override
    def is_finished(self, split: PravegaSegmentSplit, position: Position) -> bool:
        sid = split.split_id
        pos = int(position)
        if sid in self._gone:
            return True
        if split.is_bounded and pos >= split.end_offset:
            return True
        length = self._sealed.get(sid)
        if length is None:
            try:
                info = self._cluster().info(split.scope, split.stream, split.segment_id)
            except NoSuchSegmentError:
                return False  # reported by end_positions
            if not info.sealed:
                return False
            length = self._sealed[sid] = info.tail
        return pos >= length

    @override
    def range_splits(
        self, split: PravegaSegmentSplit, start: Position, end: Position
    ) -> list[PravegaSegmentSplit]:
        return [
            PravegaSegmentSplit(
                split.scope, split.stream, split.segment_id, int(start), int(end), split.predecessors
            )
        ]

    # --- event time (eventTime.alignment=cut) -----------------------------------------------------
    @override
    def note_split_times(self, times: Mapping[str, tuple[PravegaSegmentSplit, Position, int]]) -> None:
        if self.event_times is not None:  # heads come from the events this driver read
            self.event_times.note_split_times({sid: (int(pos), t) for sid, (_s, pos, t) in times.items()})

    @override
    def event_time_lookup(self) -> PravegaEventTimeLookup | PravegaWatermarkLookup:
        if self.watermarks is not None:
            return self.watermarks
        if self.event_times is None:
            raise ConnectorError("this Pravega planner was built without eventTime.alignment=cut")
        return self.event_times

    def describe(self) -> dict[str, Any]:
        """For logs (no secrets)."""
        return {"planner": "pravega", "options": repr(self.options)}
