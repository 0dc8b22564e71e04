from __future__ import annotations

import pytest

from connector_base.errors import SerializationError
from connectors.kinesis.positions import PositionKind, ShardPosition, StartingPosition
from connectors.kinesis.split import KinesisShardSplit, KinesisShardSplitSerializer, KinesisShardSplitState

GOLDEN_V1 = (
    '{"data":{"closed":true,"end":{"k":"AT_TIMESTAMP","ms":1700000000123},"parents":["shardId-000000000000"],'
    '"shard":"shardId-000000000002","start":{"k":"TRIM_HORIZON"},"stream":"orders"},"v":1}'
)


def test_positions_round_trip() -> None:
    for pos in (
        ShardPosition.trim_horizon(),
        ShardPosition.at_timestamp(5),
        ShardPosition.shard_end(),
        ShardPosition.after_sequence_number("4960"),
    ):
        assert ShardPosition.from_json(pos.to_json()) == pos
    assert str(ShardPosition.at_timestamp(0)).startswith("AT_TIMESTAMP(0 = 1970-01-01T00:00:00.000")


def test_position_validation() -> None:
    with pytest.raises(ValueError):
        ShardPosition(PositionKind.AT_TIMESTAMP)
    with pytest.raises(ValueError):
        ShardPosition(PositionKind.TRIM_HORIZON, timestamp_ms=3)


def test_starting_positions_resolve_on_the_service_clock() -> None:
    assert StartingPosition.trim_horizon().resolve(1000) == ShardPosition.trim_horizon()
    assert StartingPosition.latest().resolve(1000) == ShardPosition.at_timestamp(1000)
    assert StartingPosition.timestamp(7).resolve(1000) == ShardPosition.at_timestamp(7)


def test_split_serializer_golden_v1() -> None:
    split = KinesisShardSplit(
        "orders",
        "shardId-000000000002",
        ShardPosition.trim_horizon(),
        ShardPosition.at_timestamp(1700000000123),
        ("shardId-000000000000",),
        True,
    )
    ser = KinesisShardSplitSerializer()
    assert ser.dumps(split) == GOLDEN_V1
    assert ser.loads(GOLDEN_V1) == split
    with pytest.raises(SerializationError):
        ser.loads('{"v": 2, "data": {}}')


def test_split_validation_and_state() -> None:
    with pytest.raises(ValueError):
        KinesisShardSplit(
            "s", "shard", ShardPosition.trim_horizon(), ShardPosition.after_sequence_number("1")
        )
    split = KinesisShardSplit("s", "shard", ShardPosition.at_timestamp(3), ShardPosition.shard_end())
    state = KinesisShardSplitState.from_split(split)
    assert state.to_split() == split
    state.position = ShardPosition.after_sequence_number("42")
    resumed = state.to_split()
    assert resumed.start == ShardPosition.after_sequence_number("42") and resumed.end == split.end
    assert split.split_id == "shard"
