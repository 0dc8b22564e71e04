"""Golden-file tests: every serialized format version stays readable and is written unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connector_base import SerializationError
from connector_base.runtime import RuntimeCheckpoint
from connector_base.serialization import FunctionSerializer, ListSerializer
from connector_base.spark import BridgeOffset
from connectors.sequence import SequenceSplit, SequenceSplitSerializer

GOLDEN = Path(__file__).parent / "golden"


def load(name: str):
    return json.loads((GOLDEN / name).read_text())


def test_split_v1_golden_reads_and_rewrites_identically() -> None:
    data = load("sequence_split_v1.json")
    ser = SequenceSplitSerializer()
    split = ser.deserialize(data)
    assert split == SequenceSplit(3, 17, 100)
    assert ser.serialize(split) == data


def test_bridge_offset_v1_golden() -> None:
    data = load("bridge_offset_v1.json")
    off = BridgeOffset.from_json(data, SequenceSplitSerializer())
    assert off.splits["p0"].pos == 4 and off.splits["p1"].split == SequenceSplit(1, 0, 10)
    assert off.no_more_splits
    assert off.to_json(SequenceSplitSerializer()) == data


def test_runtime_checkpoint_v1_golden() -> None:
    data = load("runtime_checkpoint_v1.json")
    ckpt = RuntimeCheckpoint.from_json(data)
    assert ckpt.checkpoint_id == 4 and ckpt.readers[0][0]["data"]["s"] == 5
    assert ckpt.to_json() == data


@pytest.mark.parametrize(
    "wrapped, fragment",
    [
        ({"v": 2, "data": {}}, "unsupported version 2"),
        ({"data": {}}, "expected {'v'"),
        ({"v": 1, "data": {"p": 1}}, "cannot read version 1"),
        ("nonsense", "expected {'v'"),
    ],
)
def test_bad_versions_and_shapes_are_clear_errors(wrapped, fragment) -> None:
    with pytest.raises(SerializationError, match=fragment.replace("{", r"\{").replace("(", r"\(")):
        SequenceSplitSerializer().deserialize(wrapped)


def test_offset_with_unknown_version_names_it() -> None:
    with pytest.raises(SerializationError, match="unsupported offset version 9"):
        BridgeOffset.from_json({"v": 9}, SequenceSplitSerializer())


def test_list_and_function_serializers_round_trip() -> None:
    fs = FunctionSerializer(1, lambda x: {"n": x}, lambda d: d["n"])
    ls = ListSerializer(fs)
    assert ls.loads(ls.dumps([1, 2, 3])) == [1, 2, 3]
    assert ls.dumps([1]) == '{"data":[{"data":{"n":1},"v":1}],"v":1}'
