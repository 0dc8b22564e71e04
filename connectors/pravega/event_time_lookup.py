"""``PravegaEventTimeLookup``: the driver's event-time lookups for ``format("pravega")``'s cut.

A segment has no index by time, so the driver reads it: from each split's position it reads the
events of one batch at most (``maxEventsPerTrigger`` + 1 events, or ``maxBytesPerTrigger`` bytes;
the whole unread range when neither is set), finds their boundaries and decodes each event's time
(:class:`~connectors.pravega.event_time.EventTimeExtractor`). What it read is kept, ``(offset,
time)`` per event, and only extended from where it stopped, so across batches each byte is read and
decoded on the driver once. Reads are sized from the limit (bytes, or the events still wanted times
the mean event size read so far, at least 64 KiB, at most 4 MiB), so a window ends at most about
one read past its limit; that part is kept for the next batch. Events before a split's new
position are dropped.

Within that window:

* a position by time ``t`` is the first event whose time, or that of any event before it, is
  ``>= t`` (so every event read is older than ``t``); past the window, the window's end;
* a split's head is the largest time read up to its end (within the window: the slowest split holds
  the cut at what it can read this batch);
* the time at a position is that of the event there.

The planner's event counts for ``maxEventsPerTrigger`` come from the same scan (``boundaries``).

Threading: the driver's stream-reader thread only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from connector_base import ConnectorError
from connector_base.spark import Position
from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.event_decoding import EVENT_HEADER_BYTES, event_boundaries
from connectors.pravega.event_time import EventTimeExtractor
from connectors.pravega.segment_store_client import MAX_READ_BYTES
from connectors.pravega.split import PravegaSegmentSplit

__all__ = ["PravegaEventTimeLookup"]

SCAN_CHUNK_BYTES = 4 * MAX_READ_BYTES
"""The largest read of one scan step."""
MIN_CHUNK_BYTES = 64 * 1024
"""The smallest read of a scan step bounded by an event count (the first, before event sizes are known)."""


@dataclass(slots=True)
class _SegmentScan:
    """What the driver has read of one segment from ``start``: whole events up to ``scanned_to``."""

    start: int
    scanned_to: int
    offsets: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    times: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    before_max: int | None = None
    """The largest time of the events dropped before ``start`` (read by this driver)."""
    leftover: bytes = b""
    """Bytes read from ``scanned_to`` on that do not yet make a whole event."""
    _running_max: np.ndarray | None = None

    def holds(self, position: int) -> bool:
        """Whether ``position`` is an event boundary this scan knows."""
        if position == self.scanned_to:
            return True
        if not self.start <= position < self.scanned_to:
            return False
        i = int(np.searchsorted(self.offsets, position))
        return i < len(self.offsets) and int(self.offsets[i]) == position

    def drop_before(self, position: int) -> None:
        i = int(np.searchsorted(self.offsets, position))
        if i:
            dropped = int(self.times[:i].max())
            self.before_max = dropped if self.before_max is None else max(self.before_max, dropped)
            self.offsets, self.times, self._running_max = self.offsets[i:], self.times[i:], None
        self.start = position

    def append(self, offsets: list[int], times: list[int], scanned_to: int) -> None:
        if offsets:
            self.offsets = np.concatenate([self.offsets, np.asarray(offsets, np.int64)])
            self.times = np.concatenate([self.times, np.asarray(times, np.int64)])
            self._running_max = None
        self.scanned_to = scanned_to

    def running_max(self) -> np.ndarray:
        if self._running_max is None:
            self._running_max = np.maximum.accumulate(self.times) if len(self.times) else self.times
        return self._running_max


class PravegaEventTimeLookup:
    """Answers ``SplitPlanner``'s event-time hooks for ``PravegaSegmentPlanner``."""

    def __init__(
        self,
        extractor: EventTimeExtractor,
        cluster: Callable[[], PravegaClusterClient],
        max_events: int | None,
        max_bytes: int | None,
    ) -> None:
        self.extractor = extractor
        self._cluster = cluster
        self._max_events = max_events
        self._max_bytes = max_bytes
        self._scans: dict[str, _SegmentScan] = {}
        self._current: dict[str, tuple[int, int]] = {}
        self.bytes_read = 0
        """Bytes this lookup read from segment stores (for tests and logs)."""

    # --- planner bookkeeping --------------------------------------------------------------------
    def note_current(self, current: Mapping[str, tuple[int, int]]) -> None:
        """Each split's ``(position, available end)`` this batch; scans of other splits are dropped."""
        self._current = dict(current)
        for sid in set(self._scans) - set(current):
            del self._scans[sid]

    def note_split_times(self, times: Mapping[str, tuple[int, int]]) -> None:
        """``split_id -> (position, t_ms)`` from the start offset: every event before ``position`` is
        older than ``t_ms``. Where this driver has read nothing before ``position`` (a restarted
        driver), ``t_ms - 1`` stands for the largest time there, so a segment read to its end keeps
        its head (exact when the cut read it to its end: the offset then holds its head + 1).
        """
        for sid, (pos, t_ms) in times.items():
            scan = self._scans.get(sid)
            if scan is None:
                self._scans[sid] = _SegmentScan(start=pos, scanned_to=pos, before_max=t_ms - 1)
            elif scan.start == pos and scan.before_max is None:
                scan.before_max = t_ms - 1

    def use_limits(self, max_events: int | None, max_bytes: int | None) -> None:
        """The window of the next lookups: ``max_events`` + 1 events or ``max_bytes`` (``None``: no cap)."""
        self._max_events, self._max_bytes = max_events, max_bytes

    def boundaries(
        self, split: PravegaSegmentSplit, start: int, end: int, max_events: int | None, max_bytes: int | None
    ) -> list[int]:
        """Event boundaries in ``[start, end]`` from ``start``: at least ``max_events`` events or
        ``max_bytes`` bytes when the range holds them (more when already read)."""
        scan = self._scan(split, start, end, max_events, max_bytes)
        bounds: list[int] = scan.offsets[: int(np.searchsorted(scan.offsets, end, side="right"))].tolist()
        if scan.scanned_to <= end:
            bounds.append(scan.scanned_to)
        return bounds if bounds else [start]

    # --- SplitPlanner's event-time hooks ----------------------------------------------------------
    def positions_at_time(
        self, ranges: Mapping[str, tuple[PravegaSegmentSplit, Position, Position]], t_ms: int
    ) -> dict[str, Position]:
        """The first event in ``[start, end)`` at or after which some time is ``>= t_ms`` (see above)."""
        out: dict[str, Position] = {}
        for sid, (split, raw_start, raw_end) in ranges.items():
            start, end = int(raw_start), int(raw_end)
            scan = self._window(split, start, end)
            i = int(np.searchsorted(scan.running_max(), t_ms, side="left"))
            found = int(scan.offsets[i]) if i < len(scan.offsets) else scan.scanned_to
            out[sid] = min(max(found, start), end)
        return out

    def times_at(
        self, positions: Mapping[str, tuple[PravegaSegmentSplit, Position]]
    ) -> dict[str, int | None]:
        """The time of the event at each position (``None`` when there is none yet)."""
        out: dict[str, int | None] = {}
        for sid, (split, raw_pos) in positions.items():
            pos = int(raw_pos)
            end = max(pos, self._current.get(sid, (pos, pos))[1])
            scan = self._window(split, pos, end)
            out[sid] = int(scan.times[0]) if len(scan.times) else None
        return out

    def head_times(self, ends: Mapping[str, tuple[PravegaSegmentSplit, Position]]) -> dict[str, int | None]:
        """The largest time read before each end (``None`` when this driver has read no event)."""
        out: dict[str, int | None] = {}
        for sid, (split, raw_end) in ends.items():
            end = int(raw_end)
            pos = min(self._current.get(sid, (end, end))[0], end)
            scan = self._window(split, pos, end)
            within = scan.times[scan.offsets < end]
            known = [
                t for t in (scan.before_max, int(within.max()) if len(within) else None) if t is not None
            ]
            out[sid] = max(known) if known else None
        return out

    # --- scanning -------------------------------------------------------------------------------
    def _window(self, split: PravegaSegmentSplit, start: int, end: int) -> _SegmentScan:
        cap = None if self._max_events is None else self._max_events + 1
        return self._scan(split, start, end, cap, self._max_bytes)

    def _scan(
        self, split: PravegaSegmentSplit, start: int, end: int, max_events: int | None, max_bytes: int | None
    ) -> _SegmentScan:
        sid = split.split_id
        scan = self._scans.get(sid)
        if scan is None or not scan.holds(start):
            scan = self._scans[sid] = _SegmentScan(start=start, scanned_to=start)
        elif start != scan.start:
            scan.drop_before(start)
        stop = end if max_bytes is None else min(end, start + max_bytes)
        while scan.scanned_to < stop and (max_events is None or len(scan.offsets) < max_events):
            chunk = stop - scan.scanned_to
            if max_events is not None:  # about the bytes of the events still wanted, from those read
                count = len(scan.offsets)
                size = (scan.scanned_to - scan.start) // count if count else 0
                chunk = min(chunk, max(MIN_CHUNK_BYTES, (max_events - count) * size))
            self._read_more(split, scan, end, min(chunk, SCAN_CHUNK_BYTES))
        return scan

    def _read_more(self, split: PravegaSegmentSplit, scan: _SegmentScan, end: int, chunk: int) -> None:
        """Read and date the whole events of the next ``chunk`` bytes (at least one whole event).

        The bytes of a partial event at the end of a read are kept for the next, never read twice.
        """
        pos = scan.scanned_to
        data = scan.leftover
        upto = min(end, pos + max(chunk, len(data) + 1))
        data += self._read(split, pos + len(data), upto)
        found = event_boundaries(data, pos, split.segment_name)
        if len(found) == 1:  # the next event does not fit the chunk: read it whole
            if len(data) < EVENT_HEADER_BYTES:
                data += self._read(split, pos + len(data), pos + EVENT_HEADER_BYTES)
            length = int.from_bytes(data[4:EVENT_HEADER_BYTES], "big")
            data += self._read(split, pos + len(data), pos + EVENT_HEADER_BYTES + length)
            found = event_boundaries(data, pos, split.segment_name)
        if found[-1] == pos:
            raise ConnectorError(
                f"segment {split.segment_name} of stream {split.scope}/{split.stream}: no whole event at "
                f"offset {pos} before {end} while reading event times for eventTime.alignment=cut"
            )
        view = memoryview(data)
        time_of = self.extractor.time_of
        where = f"segment {split.segment_name} of stream {split.scope}/{split.stream}"
        times = [
            time_of(bytes(view[a - pos + EVENT_HEADER_BYTES : b - pos]), where, a)
            for a, b in zip(found, found[1:], strict=False)
        ]
        scan.leftover = data[found[-1] - pos :]
        scan.append(found[:-1], times, found[-1])

    def _read(self, split: PravegaSegmentSplit, start: int, end: int) -> bytes:
        if end <= start:
            return b""
        data = self._cluster().read_bytes(split.scope, split.stream, split.segment_id, start, end)
        self.bytes_read += len(data)
        return data
