"""Routing keys to segments as the official Pravega clients do (no network).

The pinned points were checked against the official client on Pravega standalone 0.13.0: the
integration test ``test_pravega_writer_interop.py`` writes these keys with ``pravega`` 0.3.8 and
asserts that each lands in the segment this router picks.
"""

from __future__ import annotations

import struct

import pytest

from connector_base import ConnectorError
from connectors.pravega.controller_client import SegmentRange
from connectors.pravega.event_router import EventRouter, hash_routing_key
from connectors.pravega.segment_writer import _Block, frame_event

PINNED = {
    "k0": 0.586503421853011,
    "k1": 0.43630594707939774,
    "user-42": 0.6534932507729343,
    "": 0.24117842791623523,
    # non-ASCII: the Rust client hashes one zero UTF-16 unit per UTF-8 byte beyond the UTF-16 length
    "é": 0.20425248406362173,
    "ключ": 0.9234905808896765,
    "日本": 0.994633361150917,
}


@pytest.mark.parametrize(("key", "point"), PINNED.items())
def test_routing_key_points_match_the_official_client(key: str, point: float) -> None:
    assert hash_routing_key(key) == point


def test_java_compatible_hash_differs_only_for_non_ascii_keys() -> None:
    assert hash_routing_key("user-42", java_compatible=True) == hash_routing_key("user-42")
    assert hash_routing_key("é", java_compatible=True) != hash_routing_key("é")


def test_points_are_in_the_unit_interval() -> None:
    for i in range(2000):
        assert 0.0 <= hash_routing_key(f"key-{i}") < 1.0


def _segments(n: int) -> list[SegmentRange]:
    return [SegmentRange(i, i / n, (i + 1) / n) for i in range(n)]


def test_router_picks_the_segment_whose_range_holds_the_point() -> None:
    segments = list(reversed(_segments(8)))  # any order in, key order inside
    router = EventRouter(segments)
    for key, point in PINNED.items():
        chosen = router.segment_for(key)
        assert chosen.min_key <= point < chosen.max_key, key


def test_router_upper_bound_belongs_to_the_lower_segment_and_none_is_random() -> None:
    router = EventRouter(_segments(4))
    assert router.segments[router._index(0.25)].segment_id == 0  # ceiling, as Java's ceilingEntry
    assert router.segments[router._index(0.2500001)].segment_id == 1
    assert {router.segment_for(None).segment_id for _ in range(400)} == {0, 1, 2, 3}


def test_router_after_a_split_keeps_other_keys_in_place() -> None:
    before = EventRouter([SegmentRange(0, 0.0, 0.5), SegmentRange(1, 0.5, 1.0)])
    after = EventRouter([SegmentRange(0, 0.0, 0.5), SegmentRange(2, 0.5, 0.75), SegmentRange(3, 0.75, 1.0)])
    for key in (f"k{i}" for i in range(200)):
        if before.segment_for(key).segment_id == 0:
            assert after.segment_for(key).segment_id == 0
        else:
            assert after.segment_for(key).segment_id in (2, 3)


def test_a_stream_without_segments_is_refused() -> None:
    with pytest.raises(ConnectorError, match="without segments"):
        EventRouter([])


def test_event_framing_and_recovery_of_unacknowledged_events() -> None:
    assert frame_event(b"abc") == struct.pack(">ii", 0, 3) + b"abc"
    block = _Block(
        bytearray(frame_event(b"one") + frame_event(b"") + frame_event(b"three")), ["a", None, "c"]
    )
    assert block.events() == [("a", b"one"), (None, b""), ("c", b"three")]
