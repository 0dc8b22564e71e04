"""Reader-group splits: positions, the emitter's moves, and golden files for every version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connectors.pravega.reader_group_enumerator import (
    READER_GROUP_STATE_SERIALIZER,
    PravegaReaderGroupState,
    group_stream_cut,
)
from connectors.pravega.reader_group_split import (
    PravegaReaderGroupSplit,
    PravegaReaderGroupSplitSerializer,
    PravegaReaderGroupSplitState,
    ReaderSegmentPosition,
)
from connectors.pravega.split import OPEN_END

GOLDEN = Path(__file__).parent / "golden"
MERGED = 1 << 32  # segment 0 of epoch 1


def _split() -> PravegaReaderGroupSplit:
    return PravegaReaderGroupSplit(
        "shop",
        "orders",
        "rg",
        1,
        (ReaderSegmentPosition(2, 120), ReaderSegmentPosition(MERGED, 0, 300, (0, 1))),
        ((2, 500), (MERGED, 300)),
    )


def _golden(name: str) -> object:
    return json.loads((GOLDEN / name).read_text())


def test_split_golden_v2_and_v1() -> None:
    ser = PravegaReaderGroupSplitSerializer()
    assert ser.serialize(_split()) == _golden("reader_group_split_v2.json")
    assert ser.deserialize(_golden("reader_group_split_v2.json")) == _split()
    old = ser.deserialize(_golden("reader_group_split_v1.json"))
    assert old == PravegaReaderGroupSplit("shop", "orders", "rg", 1)
    assert old.positions == () and not old.is_bounded


def test_enumerator_state_golden_v2_and_v1() -> None:
    reader = PravegaReaderGroupSplit("shop", "orders", "rg", 0, (ReaderSegmentPosition(0, 40),))
    state = PravegaReaderGroupState(True, (reader,))
    assert READER_GROUP_STATE_SERIALIZER.serialize(state) == _golden("reader_group_state_v2.json")
    assert READER_GROUP_STATE_SERIALIZER.deserialize(_golden("reader_group_state_v2.json")) == state
    assert READER_GROUP_STATE_SERIALIZER.deserialize(_golden("reader_group_state_v1.json")) == (
        PravegaReaderGroupState()
    )


def test_state_moves_with_emitted_events_and_hands_over_to_successors() -> None:
    state = PravegaReaderGroupSplitState.from_split(_split())
    state.advance(2, 180)
    state.finish(MERGED, [ReaderSegmentPosition(MERGED + 1, 0, OPEN_END, (MERGED,))])
    split = state.to_split()
    assert [(p.segment_id, p.offset) for p in split.positions] == [(2, 180), (MERGED + 1, 0)]
    assert split.end_cut == _split().end_cut
    assert group_stream_cut([split, PravegaReaderGroupSplit("shop", "orders", "rg", 0)]) == {
        2: 180,
        MERGED + 1: 0,
    }


def test_bounded_split_knows_its_end_offsets() -> None:
    split = _split()
    assert split.is_bounded
    assert split.end_offset(2) == 500 and split.end_offset(7) == OPEN_END


def test_invalid_positions_are_refused() -> None:
    with pytest.raises(ValueError, match="end_offset"):
        ReaderSegmentPosition(1, 50, 10)
    with pytest.raises(ValueError, match="twice"):
        PravegaReaderGroupSplit("s", "t", "g", 0, (ReaderSegmentPosition(1, 0), ReaderSegmentPosition(1, 5)))
