"""Pravega watermarks without a server: the ``Watermark`` decoder and the cut's lookups from watermarks.

The encoder here is written from Pravega's format description (``VersionedSerializer``: format byte,
version, revision count, then per revision its number and int32 length; compact ints), not from
the decoder; ``integration_tests/connectors/pravega/test_pravega_watermarks.py`` decodes what real
Pravega 0.13 writes.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

import pytest

from connector_base.spark import Backlog, SplitPlanner
from connector_base.spark.event_time_cut import EventTimeCut
from connector_base.spark.event_time_options import Alignment, EventTimeOptions
from connector_base.spark.offsets import OFFSET_VERSION
from connector_base.spark.read_limit_options import ReadLimitOptions
from connectors.pravega.split import PravegaSegmentSplit
from connectors.pravega.watermark_lookup import PravegaWatermarkLookup
from connectors.pravega.watermarks import PravegaWatermark, WatermarkReader, decode_watermark


def _compact(n: int) -> bytes:
    if n <= 0x7F:
        return bytes([n])
    if n <= 0x3FFF:
        return struct.pack(">H", n | 0x8000)
    return struct.pack(">I", n | 0xC000_0000)


def _object(body: bytes) -> bytes:
    """Format 0, version 0, one revision (0) of ``body``."""
    return bytes([0, 0, 1, 0]) + struct.pack(">i", len(body)) + body


def encode(lower: int, upper: int, cut: Mapping[int, tuple[int, float, float]]) -> bytes:
    entries = b"".join(
        _object(struct.pack(">qdd", seg, low, high)) + struct.pack(">q", offset)
        for seg, (offset, low, high) in cut.items()
    )
    return _object(struct.pack(">qq", lower, upper) + _compact(len(cut)) + entries)


def test_a_watermark_decodes_its_bounds_and_stream_cut() -> None:
    data = encode(1000, 2500, {0: (3422, 0.0, 0.5), (1 << 32) | 1: (0, 0.5, 1.0)})
    mark = decode_watermark(data)
    assert (mark.lower_ms, mark.upper_ms) == (1000, 2500)
    assert mark.cut == {0: 3422, (1 << 32) | 1: 0}
    assert mark.ranges == {0: (0.0, 0.5), (1 << 32) | 1: (0.5, 1.0)}
    assert mark.newest_epoch == 1


@pytest.mark.parametrize("segments", [0, 1, 200, 20_000])
def test_every_width_of_the_segment_count_decodes(segments: int) -> None:
    cut = {i: (i * 10, i / (segments + 1), (i + 1) / (segments + 1)) for i in range(segments)}
    assert decode_watermark(encode(-5, 7, cut)).cut == {i: i * 10 for i in range(segments)}


def test_what_is_not_a_version_0_watermark_is_refused() -> None:
    good = encode(1, 2, {0: (5, 0.0, 1.0)})
    with pytest.raises(ValueError, match="version 1"):
        decode_watermark(good[:1] + b"\x01" + good[2:])
    with pytest.raises(ValueError, match="serializer format 3"):
        decode_watermark(b"\x03" + good[1:])
    with pytest.raises(ValueError, match="bytes wanted"):
        decode_watermark(good[:-3])


# --- the lookups -----------------------------------------------------------------------------------
SEG0, SEG1 = 0, 1
MARKS = [
    PravegaWatermark(100, 100, {SEG0: 10, SEG1: 20}, {}),
    PravegaWatermark(200, 250, {SEG0: 40, SEG1: 20}, {}),  # segment 1 got nothing new
    PravegaWatermark(300, 300, {SEG0: 50, SEG1: 40}, {}),
]


def _lookup(marks: list[PravegaWatermark]) -> PravegaWatermarkLookup:
    lookup = PravegaWatermarkLookup(lambda: None)  # type: ignore[arg-type,return-value]
    reader = WatermarkReader("sc", "st", lambda: None)  # type: ignore[arg-type,return-value]
    reader.watermarks = list(marks)
    lookup._readers[("sc", "st")] = reader
    return lookup


def _split(segment: int) -> PravegaSegmentSplit:
    return PravegaSegmentSplit("sc", "st", segment, 0)


def test_positions_times_and_heads_come_from_the_watermarks() -> None:
    lookup = _lookup(MARKS)
    s0, s1 = _split(SEG0), _split(SEG1)
    ranges = {"a": (s0, 0, 100), "b": (s1, 0, 100)}
    assert lookup.positions_at_time(ranges, 100) == {"a": 10, "b": 20}
    assert lookup.positions_at_time(ranges, 101) == {"a": 40, "b": 20}  # everything older than 101
    assert lookup.positions_at_time(ranges, 10**9) == {"a": 50, "b": 40}  # never past the newest
    assert lookup.positions_at_time({"a": (s0, 40, 45)}, 100) == {"a": 40}  # clamped to the range
    assert lookup.times_at({"a": (s0, 0), "b": (s1, 20)}) == {"a": 99, "b": 299}
    assert lookup.times_at({"a": (s0, 50)}) == {"a": None}
    # segment 1 at 20 has everything older than 250's watermark's lower bound too
    assert lookup.head_times({"a": (s0, 40), "b": (s1, 20)}) == {"a": 199, "b": 199}
    assert lookup.head_times({"a": (s0, 9)}) == {"a": None}
    assert (
        lookup.clamp(s0, 0, 1000) == 50 and lookup.clamp(s0, 0, 40) == 40 and lookup.clamp(s0, 70, 90) == 70
    )


def test_a_segment_the_cut_does_not_name_is_before_or_after_it_by_epoch() -> None:
    successor = (1 << 32) | 2
    lookup = _lookup([PravegaWatermark(100, 100, {successor: 5, SEG1: 7}, {})])
    assert lookup.clamp(_split(SEG0), 0, 80) == 80  # sealed predecessor: read to its end
    later = (2 << 32) | 3
    assert lookup.clamp(_split(later), 0, 80) == 0  # not reached yet


def test_no_watermark_yet_plans_nothing() -> None:
    lookup = _lookup([])
    assert lookup.clamp(_split(SEG0), 4, 80) == 4
    assert lookup.head_times({"a": (_split(SEG0), 4)}) == {"a": None}


class _Planner(SplitPlanner[PravegaSegmentSplit]):
    """Byte positions, one event per 10 bytes; event times from ``lookup`` (watermarks)."""

    def __init__(self, lookup: PravegaWatermarkLookup) -> None:
        self.lookup = lookup

    def start_position(self, split: PravegaSegmentSplit) -> int:
        return 0

    def end_positions(self, splits: Mapping[str, tuple[PravegaSegmentSplit, Any]]) -> dict[str, Any]:
        return {sid: self.lookup.clamp(s, int(p), 1000) for sid, (s, p) in splits.items()}

    def backlog(self, split: PravegaSegmentSplit, start: Any, end: Any) -> Backlog:
        return Backlog(records=(int(end) - int(start)) // 10, bytes=int(end) - int(start))

    def is_finished(self, split: PravegaSegmentSplit, position: Any) -> bool:
        return False

    def range_splits(self, split: PravegaSegmentSplit, start: Any, end: Any) -> list[PravegaSegmentSplit]:
        return [split]

    def event_time_lookup(self) -> PravegaWatermarkLookup:
        return self.lookup


def test_the_cut_ends_batches_at_watermarks_and_logs_their_lower_bounds() -> None:
    """With a limit of one watermark's events, each batch ends at the next watermark's cut."""
    lookup = _lookup(MARKS)
    planner = _Planner(lookup)
    cut = EventTimeCut(EventTimeOptions(alignment=Alignment.CUT))
    splits = {"a": _split(SEG0), "b": _split(SEG1)}
    pos: dict[str, int] = {"a": 0, "b": 0}
    start: dict[str, Any] = {"v": OFFSET_VERSION, "splits": {sid: {"pos": 0, "first": 0} for sid in splits}}
    limits = ReadLimitOptions(max_records=3)  # 3 events from one watermark to the next
    seen = []
    for _batch in range(3):
        ends = planner.end_positions({sid: (s, pos[sid]) for sid, s in splits.items()})
        ranges = {sid: (s, pos[sid], ends[sid]) for sid, s in splits.items()}
        bounded = cut.bound(planner, start, ranges, limits)
        chosen = {sid: int(r[2]) for sid, r in bounded.items()}
        mark = cut.mark(chosen)
        assert mark is not None
        seen.append((chosen, mark.cut_ms))
        pos = chosen
        splits_at = {sid: {"pos": p, "first": 0} for sid, p in pos.items()}
        start = {"v": OFFSET_VERSION, "splits": splits_at, "cut": mark.to_json()}
    assert seen == [
        ({"a": 10, "b": 20}, 100),
        ({"a": 40, "b": 20}, 200),
        ({"a": 50, "b": 40}, 300),
    ]


# --- pruning ---------------------------------------------------------------------------------------
def _reader(marks: list[PravegaWatermark]) -> WatermarkReader:
    reader = WatermarkReader("sc", "st", lambda: None)  # type: ignore[arg-type,return-value]
    reader.watermarks = list(marks)
    return reader


def test_prune_keeps_the_newest_watermark_at_or_before_every_position_and_what_follows() -> None:
    reader = _reader(MARKS)
    assert reader.prune({SEG0: 5, SEG1: 5}) == 0  # before the first cut: all may answer
    assert reader.prune({SEG0: 40, SEG1: 20}) == 1  # at the second cut: the first goes
    assert reader.watermarks == MARKS[1:] and reader.pruned == 1
    assert reader.prune({SEG0: 49, SEG1: 1000}) == 0  # segment 0 is not at the third cut yet
    assert reader.prune({SEG0: 50, SEG1: 40}) == 1
    assert reader.watermarks == MARKS[2:] and reader.pruned == 2
    assert reader.prune({SEG0: 10**6, SEG1: 10**6}) == 0  # the newest always stays (the clamp)


def test_prune_keeps_what_a_segment_missing_from_the_positions_may_need() -> None:
    successor = (1 << 32) | 2
    marks = [*MARKS, PravegaWatermark(400, 400, {successor: 5, SEG1: 60}, {})]
    reader = _reader(marks)
    # the successor is held back (not planned, no position): the watermark naming it stays
    assert reader.prune({SEG0: 10**6, SEG1: 10**6}) == 2
    assert reader.watermarks == marks[2:]
    # planned, but segment 0 (its predecessor, wholly before the last cut) is still read: its heads
    # come from the watermarks that name it, so they stay
    reader = _reader(marks)
    assert reader.prune({SEG0: 10**6, SEG1: 60, successor: 5}) == 2
    # segment 0 finished (no longer planned): everything before the last watermark goes
    assert reader.prune({SEG1: 60, successor: 5}) == 1
    assert reader.watermarks == marks[3:]


def test_the_lookups_answers_from_the_positions_on_are_the_same_after_pruning() -> None:
    """Every question a later batch asks (positions at or after the pruning positions) gets the
    answer it got with every watermark kept."""
    marks = [PravegaWatermark(100 * (i + 1), 100 * (i + 1), {SEG0: 10 * (i + 1), SEG1: 7 * (i + 1)}, {})
             for i in range(30)]  # fmt: skip
    full, pruned = _lookup(marks), _lookup(marks)
    s0, s1 = _split(SEG0), _split(SEG1)
    at = {SEG0: 120, SEG1: 140}  # segment 0 is the slow one (watermark 12's cut), segment 1 at 20's
    for split in (s0, s1):
        pruned.clamp(split, at[split.segment_id], 10**6)  # the trigger planned from here
    pruned._readers[("sc", "st")].poll = lambda: []  # type: ignore[method-assign]
    pruned.refresh({("sc", "st")})
    kept = pruned._readers[("sc", "st")].watermarks
    assert kept == marks[11:], [m.lower_ms for m in kept]  # watermark 12 (cut 120) on
    for p0 in range(120, 320, 3):
        for p1 in range(140, 230, 5):
            ranges = {"a": (s0, p0, 400), "b": (s1, p1, 400)}
            for t in range(0, 3200, 70):
                assert pruned.positions_at_time(ranges, t) == full.positions_at_time(ranges, t)
            here = {"a": (s0, p0), "b": (s1, p1)}
            assert pruned.times_at(here) == full.times_at(here)
            assert pruned.head_times(here) == full.head_times(here)
            assert pruned.clamp(s0, p0, 10**6) == full.clamp(s0, p0, 10**6)
