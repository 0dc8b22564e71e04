"""Shard discovery and assignment, with ListShards replaced by fixed snapshots (no network)."""

from __future__ import annotations

import pytest

from connector_base.spark.enumerator_context import DriverEnumeratorContext
from connectors.kinesis import enumerator as enumerator_module
from connectors.kinesis.enumerator import (
    ENUMERATOR_STATE_SERIALIZER,
    KinesisEnumeratorState,
    KinesisShardEnumerator,
)
from connectors.kinesis.options import KinesisOptions
from connectors.kinesis.positions import ShardPosition
from connectors.kinesis.shard_discovery import ShardInfo, StreamSnapshot, _topological
from connectors.kinesis.split import KinesisShardSplit

NOW = 1_700_000_000_000


def _options(**extra: str) -> KinesisOptions:
    return KinesisOptions.parse({"streamName": "s", "region": "us-east-1", **extra})


def _snapshot(*shards: ShardInfo) -> StreamSnapshot:
    return StreamSnapshot(tuple(_topological(list(shards))), NOW, 24)


def test_parents_come_before_children() -> None:
    shards = [ShardInfo("c", ("a", "b"), False), ShardInfo("b", (), True), ShardInfo("a", ("z",), True)]
    assert [s.shard_id for s in _topological(shards)] == ["a", "b", "c"]


def _run(
    monkeypatch: pytest.MonkeyPatch,
    snapshots: list[StreamSnapshot],
    opts: KinesisOptions,
    state: KinesisEnumeratorState | None = None,
) -> tuple[list[list[KinesisShardSplit]], KinesisShardEnumerator]:
    queue = list(snapshots)
    monkeypatch.setattr(enumerator_module, "list_stream", lambda _o: queue.pop(0))
    context: DriverEnumeratorContext[KinesisShardSplit] = DriverEnumeratorContext()
    enumerator = KinesisShardEnumerator(context, opts, bounded=False, state=state)
    enumerator.start()
    enumerator.add_reader(0)
    rounds = []
    for _ in snapshots:
        context.run_due(force=True)
        rounds.append(context.take_assigned())
    return rounds, enumerator


def test_initial_shards_start_at_the_resolved_position_later_ones_at_trim_horizon(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = _snapshot(ShardInfo("shard-0", (), False))
    second = _snapshot(
        ShardInfo("shard-0", (), True),
        ShardInfo("shard-1", ("shard-0",), False),
        ShardInfo("shard-2", ("shard-0",), False),
    )
    rounds, enumerator = _run(monkeypatch, [first, second], _options(startingPosition="LATEST"))
    assert [(s.shard_id, s.start) for s in rounds[0]] == [("shard-0", ShardPosition.at_timestamp(NOW))]
    assert [(s.shard_id, s.start, s.parent_shard_ids) for s in rounds[1]] == [
        ("shard-1", ShardPosition.trim_horizon(), ("shard-0",)),
        ("shard-2", ShardPosition.trim_horizon(), ("shard-0",)),
    ]
    assert all(s.end is None for r in rounds for s in r)
    state = enumerator.snapshot_state(1)
    assert ENUMERATOR_STATE_SERIALIZER.loads(ENUMERATOR_STATE_SERIALIZER.dumps(state)) == state
    assert state == KinesisEnumeratorState(("shard-0", "shard-1", "shard-2"), True)


def test_a_restored_enumerator_does_not_reassign_and_treats_new_shards_as_children(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    snap = _snapshot(ShardInfo("shard-0", (), True), ShardInfo("shard-1", ("shard-0",), False))
    rounds, _e = _run(
        monkeypatch,
        [snap],
        _options(startingPosition="AT_TIMESTAMP", startingTimestamp="5"),
        KinesisEnumeratorState(("shard-0",), True),
    )
    assert [(s.shard_id, s.start) for s in rounds[0]] == [("shard-1", ShardPosition.trim_horizon())]
