"""Splits, split state and the versioned serializers (golden files pin version 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connector_base import SerializationError
from connectors.files import (
    FileEnumeratorState,
    FileEnumeratorStateSerializer,
    FileSourceSplit,
    FileSourceSplitSerializer,
    FileSourceSplitState,
    SplitKind,
)

GOLDEN = Path(__file__).parent / "golden"


def test_split_v1_golden_reads_and_rewrites_identically() -> None:
    data = json.loads((GOLDEN / "file_source_split_v1.json").read_text())
    ser = FileSourceSplitSerializer()
    split = ser.deserialize(data)
    assert split == FileSourceSplit(
        "/data/in/part-0001.jsonl", 33554432, 1048576, 40000000, 1763769600000, SplitKind.LINES, 33600000
    )
    assert split.split_id == "/data/in/part-0001.jsonl#33554432"
    assert ser.serialize(split) == data


def test_enumerator_state_v1_golden() -> None:
    data = json.loads((GOLDEN / "file_enumerator_state_v1.json").read_text())
    ser = FileEnumeratorStateSerializer()
    state = ser.deserialize(data)
    assert state.processed == ["/data/in/a.parquet", "/data/in/b.parquet"]
    assert state.pending[0].kind is SplitKind.ROW_GROUPS and state.pending[0].length == 4
    assert state.mtimes == {} and state.age_floor_ms is None  # version 1 had neither
    assert ser.deserialize(ser.serialize(state)) == state
    assert ser.deserialize(ser.serialize(FileEnumeratorState())) == FileEnumeratorState()


def test_enumerator_state_v2_golden() -> None:
    data = json.loads((GOLDEN / "file_enumerator_state_v2.json").read_text())
    ser = FileEnumeratorStateSerializer()
    state = ser.deserialize(data)
    assert state.processed == ["/data/in/a.parquet", "/data/in/b.parquet"]
    assert state.mtimes == {"/data/in/a.parquet": 1763769500000}
    assert state.age_floor_ms == 1763164800000
    assert ser.serialize(state) == data


def test_unknown_version_is_rejected() -> None:
    with pytest.raises(SerializationError):
        FileSourceSplitSerializer().deserialize({"v": 99, "data": {}})


def test_state_round_trip_keeps_the_id_and_moves_the_position() -> None:
    split = FileSourceSplit("/f", 100, 50, 1000, 1, SplitKind.LINES)
    state = FileSourceSplitState.from_split(split)
    assert state.position == 100
    state.position = 130
    resumed = state.to_split()
    assert resumed.split_id == split.split_id and resumed.start_position == 130 and resumed.end == 150


@pytest.mark.parametrize(
    "args",
    [
        ("/f", -1, 1, 10, 0, SplitKind.LINES),
        ("/f", 5, 10, 10, 0, SplitKind.LINES),
        ("/f", 0, 5, 10, 0, SplitKind.LINES, 7),
    ],
)
def test_invalid_splits_are_rejected(args) -> None:
    with pytest.raises(ValueError):
        FileSourceSplit(*args)
