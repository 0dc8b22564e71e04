"""``PravegaWatermark`` and ``WatermarkReader``: a stream's watermarks, read from ``_MARK<stream>``.

Pravega's controller combines the times its writers note (``noteTimestampFromWriter``, or a
transaction committed with a timestamp) into watermarks and appends them, one event each, to the
stream ``_MARK<stream>`` in the same scope. A watermark is a time window and a stream cut:
``lowerTimeBound`` is the least of the active writers' noted times, ``upperTimeBound`` the largest,
and the stream cut (segment id -> offset) bounds every writer's noted position from above. A
watermark is written only when the lower bound moves forward, and each stream cut is at or after
the previous one. So everything a writer wrote before noting a time lies before the cut of the
first watermark whose lower bound has reached that time.

The event is Pravega's ``VersionedSerializer`` encoding of ``io.pravega.shared.watermarks.Watermark``
(version 0, revision 0): a header (serializer format byte 0, object version, revision count; then
per revision its number and an int32 length), two big-endian int64 bounds, then the stream cut as a
map: a compact int count, and per entry a nested ``SegmentWithRange`` (the same header, then int64
segment id and two doubles, its key range) and an int64 offset. Compact ints: the top bits of the
first byte say the width (``0`` one byte of 7 bits, ``10`` two bytes of 14, ``11`` four bytes of 30).
No Python library reads this format, hence the decoder here.

Threading: the driver's stream-reader thread only.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from connector_base import ConnectorError
from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.event_decoding import EVENT_HEADER_BYTES, event_boundaries

__all__ = ["PravegaWatermark", "WatermarkReader", "decode_watermark", "mark_stream", "position_in"]

_FORMAT = 0
_INT64 = struct.Struct(">q")
_DOUBLE = struct.Struct(">d")


def mark_stream(stream: str) -> str:
    """The name of the stream that holds ``stream``'s watermarks (in the same scope)."""
    return f"_MARK{stream}"


@dataclass(frozen=True, slots=True)
class PravegaWatermark:
    """One watermark: the writers' time window and the stream cut that bounds their positions."""

    lower_ms: int
    upper_ms: int
    cut: dict[int, int]
    """Segment id -> offset."""
    ranges: dict[int, tuple[float, float]]
    """Segment id -> its key range ``[low, high)``."""

    def position(self, segment_id: int) -> int | None:
        """Where the cut is in ``segment_id``; ``None`` when the cut does not name it."""
        return self.cut.get(segment_id)

    @property
    def newest_epoch(self) -> int:
        """The highest epoch among the cut's segments (``segment id >> 32``)."""
        return max((s >> 32 for s in self.cut), default=0)


class _Input:
    """A cursor over one serialized watermark (see the module docstring)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError(f"{n} bytes wanted at {self.pos} of {len(self.data)}")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def byte(self) -> int:
        return self.take(1)[0]

    def int64(self) -> int:
        return int(_INT64.unpack(self.take(8))[0])

    def double(self) -> float:
        return float(_DOUBLE.unpack(self.take(8))[0])

    def compact_int(self) -> int:
        first = self.byte()
        if first & 0x80 == 0:
            return first
        if first & 0x40 == 0:
            return ((first & 0x3F) << 8) | self.byte()
        return int.from_bytes(bytes([first & 0x3F]) + self.take(3), "big")

    def header(self, what: str, with_format: bool) -> int:
        """Read an object header; returns where its revision 0 ends."""
        if with_format:
            fmt = self.byte()
            if fmt != _FORMAT:
                raise ValueError(f"{what}: serializer format {fmt}, expected {_FORMAT}")
        version, revisions = self.byte(), self.byte()
        if version != 0 or revisions < 1:
            raise ValueError(f"{what}: version {version} with {revisions} revisions, expected version 0")
        revision = self.byte()
        length = int.from_bytes(self.take(4), "big", signed=True)
        if revision != 0 or length < 0:
            raise ValueError(f"{what}: revision {revision} of length {length}, expected revision 0")
        return self.pos + length


def decode_watermark(data: bytes) -> PravegaWatermark:
    """Decode one ``_MARK`` event; ``ValueError`` when it is not a version-0 ``Watermark``."""
    cursor = _Input(data)
    end = cursor.header("Watermark", with_format=True)
    lower, upper = cursor.int64(), cursor.int64()
    cut: dict[int, int] = {}
    ranges: dict[int, tuple[float, float]] = {}
    for _ in range(cursor.compact_int()):
        # a nested object written through the serializer's stream: with its format byte
        key_end = cursor.header("SegmentWithRange", with_format=True)
        segment_id, low, high = cursor.int64(), cursor.double(), cursor.double()
        cursor.pos = key_end
        cut[segment_id] = cursor.int64()
        ranges[segment_id] = (low, high)
    if cursor.pos > end:
        raise ValueError(f"Watermark: fields run to {cursor.pos}, past its revision's end {end}")
    return PravegaWatermark(lower, upper, cut, ranges)


class WatermarkReader:
    """Reads the watermarks of one stream as they are written, each event once."""

    def __init__(self, scope: str, stream: str, cluster: Callable[[], PravegaClusterClient]) -> None:
        self.scope = scope
        self.stream = stream
        self.marks = mark_stream(stream)
        self._cluster = cluster
        self._read_to: dict[int, int] = {}
        self._partial: dict[int, bytes] = {}
        self.watermarks: list[PravegaWatermark] = []
        """The watermarks read and not pruned (:meth:`prune`), oldest first (lower bounds increasing)."""
        self.pruned = 0
        """How many watermarks :meth:`prune` dropped so far."""

    def poll(self) -> list[PravegaWatermark]:
        """Read what the mark stream gained since the last call; returns the new watermarks."""
        client = self._cluster()
        if not client.stream_exists(self.scope, self.marks):
            return []
        new: list[PravegaWatermark] = []
        for segment in client.current_segments(self.scope, self.marks):
            seg = segment.segment_id
            info = client.info(self.scope, self.marks, seg)
            start = self._read_to.get(seg, info.head)
            if start < info.head:  # truncated past what was read: older marks are gone
                start, self._partial[seg] = info.head, b""
            if info.tail <= start:
                continue
            data = self._partial.get(seg, b"") + client.read_bytes(
                self.scope, self.marks, seg, start, info.tail
            )
            base = start - len(self._partial.get(seg, b""))
            where = f"segment {seg} of {self.scope}/{self.marks}"
            bounds = event_boundaries(data, base, where)
            for a, b in zip(bounds, bounds[1:], strict=False):
                payload = data[a - base + EVENT_HEADER_BYTES : b - base]
                try:
                    new.append(decode_watermark(payload))
                except ValueError as e:
                    raise ConnectorError(
                        f"{where}: the event at offset {a} is not a Pravega watermark ({e}); "
                        "eventTime.cutFrom=watermarks reads Pravega 0.13's Watermark version 0"
                    ) from None
            self._partial[seg] = data[bounds[-1] - base :]
            self._read_to[seg] = info.tail
        for mark in sorted(new, key=lambda w: w.lower_ms):
            if not self.watermarks or mark.lower_ms > self.watermarks[-1].lower_ms:
                self.watermarks.append(mark)
        return new

    def prune(self, positions: Mapping[int, int]) -> int:
        """Drop the watermarks no read from ``positions`` on can need; returns how many were dropped.

        ``positions``: segment id -> where the query's split of that segment is (every later read
        starts there or after). The newest watermark whose cut is at or before every position, and
        names no segment missing from ``positions``, stays (it answers a segment's head at its
        position), and so does everything after it; the ones before it are dropped. So at most the
        watermarks between the slowest split's position and the newest remain. Segments missing from
        ``positions`` are finished ones (never asked about again) or successors held back until
        their predecessors finish: while a predecessor is read, no watermark after its seal is at
        or before its position (the cut lies past its end), so what a held successor needs (the
        watermarks from its creation on) is never dropped.
        """
        keep = 0
        for i, mark in enumerate(self.watermarks):
            if all(s in positions for s in mark.cut) and all(
                position_in(mark, s) <= at for s, at in positions.items()
            ):
                keep = i
        if keep:
            del self.watermarks[:keep]
            self.pruned += keep
        return keep


_END = 2**63 - 1
"""The position of a segment that lies wholly before a watermark's cut."""


def position_in(mark: PravegaWatermark, segment_id: int) -> int:
    """Where ``mark``'s cut is in ``segment_id``: its offset when the cut names it, else the end
    (``2**63 - 1``) for a segment of an older epoch than the cut's (a predecessor, wholly before it)
    and 0 for a newer one (a successor, not reached yet)."""
    at = mark.position(segment_id)
    if at is not None:
        return at
    return _END if (segment_id >> 32) < mark.newest_epoch else 0
