"""Split, serializers (golden versions), enumerator and planner arithmetic (no network)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from connector_base import ConnectorError, ReaderInfo, SplitEnumeratorContext
from connectors.kafka.enumerator import (
    ENUMERATOR_STATE_SERIALIZER,
    KafkaEnumeratorState,
    KafkaSourceEnumerator,
)
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.planner import KafkaSplitPlanner
from connectors.kafka.positions import TopicPartition
from connectors.kafka.split import (
    NO_STOPPING_OFFSET,
    KafkaPartitionSplit,
    KafkaPartitionSplitSerializer,
    KafkaPartitionSplitState,
)


def test_split_validation_and_state() -> None:
    s = KafkaPartitionSplit("t", 2, 5, 9)
    assert s.split_id == "t-2" and s.is_bounded
    assert not KafkaPartitionSplit("t", 0, 0).is_bounded
    state = KafkaPartitionSplitState.from_split(s)
    state.next_offset = 7
    assert state.to_split() == KafkaPartitionSplit("t", 2, 7, 9)
    for bad in (("", 0, 0, -1), ("t", -1, 0, -1), ("t", 0, -3, -1), ("t", 0, 5, 4)):
        with pytest.raises(ValueError):
            KafkaPartitionSplit(*bad)


def test_split_serializer_golden_v1() -> None:
    ser = KafkaPartitionSplitSerializer()
    golden = {"v": 1, "data": {"t": "orders", "p": 3, "s": 10, "e": -1}}
    assert ser.deserialize(golden) == KafkaPartitionSplit("orders", 3, 10, NO_STOPPING_OFFSET)
    assert ser.serialize(KafkaPartitionSplit("orders", 3, 10)) == golden


def test_enumerator_state_serializer_golden_v1() -> None:
    golden = {"v": 1, "data": {"assigned": [["a", 0], ["b", 1]], "initial": True}}
    state = ENUMERATOR_STATE_SERIALIZER.deserialize(golden)
    assert state == KafkaEnumeratorState(frozenset({("a", 0), ("b", 1)}), True)
    assert ENUMERATOR_STATE_SERIALIZER.serialize(state) == golden


class FakeContext(SplitEnumeratorContext[KafkaPartitionSplit]):
    def __init__(self) -> None:
        self.assigned: list[KafkaPartitionSplit] = []
        self.no_more = False
        self.calls: list[
            tuple[Callable[[], Any], Callable[[Any, BaseException | None], None], float | None]
        ] = []

    def current_parallelism(self) -> int:
        return 1

    def registered_readers(self) -> Mapping[int, ReaderInfo]:
        return {0: ReaderInfo(0)}

    def assign_splits(self, assignment: Mapping[int, Sequence[KafkaPartitionSplit]]) -> None:
        for splits in assignment.values():
            self.assigned.extend(splits)

    def signal_no_more_splits(self, subtask_id: int) -> None:
        self.no_more = True

    def call_async(
        self, callable_: Any, handler: Any, initial_delay_s: float = 0.0, period_s: float | None = None
    ) -> None:
        self.calls.append((callable_, handler, period_s))

    def run(self) -> None:
        for callable_, handler, _period in self.calls:
            try:
                handler(callable_(), None)
            except Exception as e:
                handler(None, e)


class FakeCluster:
    def __init__(self, topics: dict[str, list[int]]) -> None:
        self.topics = topics

    def partitions(self) -> dict[str, list[int]]:
        return self.topics

    def earliest(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: 0 for tp in partitions}

    def latest(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: 50 for tp in partitions}

    def close(self) -> None:
        pass


def _opts(streaming: bool, **extra: str) -> KafkaSourceOptions:
    return KafkaSourceOptions.parse(
        {"kafka.bootstrap.servers": "h:1", "subscribePattern": "t.*", **extra}, streaming
    )


def test_enumerator_streaming_discovers_new_partitions_at_earliest() -> None:
    cluster = FakeCluster({"t1": [0, 1], "other": [0]})
    ctx = FakeContext()
    enum = KafkaSourceEnumerator(ctx, _opts(True, partitionDiscoveryIntervalMs="500"), lambda: cluster)  # type: ignore[arg-type,return-value]
    enum.start()
    enum.add_reader(0)
    assert ctx.calls[0][2] == 0.5
    ctx.run()
    assert [(s.topic, s.partition, s.starting_offset) for s in ctx.assigned] == [("t1", 0, 50), ("t1", 1, 50)]
    cluster.topics = {"t1": [0, 1, 2], "t2": [0]}
    ctx.run()
    assert [(s.topic, s.partition, s.starting_offset) for s in ctx.assigned[2:]] == [
        ("t1", 2, 0),
        ("t2", 0, 0),
    ]
    assert not ctx.no_more
    state = enum.snapshot_state(1)
    assert state.assigned == {("t1", 0), ("t1", 1), ("t1", 2), ("t2", 0)} and state.initial_discovery_done
    # restored: only partitions it never saw are new, and they start at earliest
    ctx2 = FakeContext()
    restored = KafkaSourceEnumerator(ctx2, _opts(True), lambda: cluster, state)  # type: ignore[arg-type,return-value]
    restored.start()
    cluster.topics["t3"] = [0]
    ctx2.run()
    assert [(s.topic, s.starting_offset) for s in ctx2.assigned] == [("t3", 0)]


def test_enumerator_batch_resolves_stops_and_ends() -> None:
    cluster = FakeCluster({"t1": [0]})
    ctx = FakeContext()
    enum = KafkaSourceEnumerator(ctx, _opts(False, endingOffsets='{"t1":{"0":20}}'), lambda: cluster)  # type: ignore[arg-type,return-value]
    enum.start()
    enum.add_reader(0)
    ctx.run()
    assert ctx.assigned == [KafkaPartitionSplit("t1", 0, 0, 20)] and ctx.no_more


def test_planner_cut_and_min_partitions() -> None:
    planner = KafkaSplitPlanner(_opts(False, minPartitions="4"))
    split = KafkaPartitionSplit("t", 0, 0)
    assert planner.cut(split, 10, 100, 25, None) == 35
    assert planner.backlog(split, 10, 100).records == 90
    planner._plan_sizes = [100]  # as end_positions leaves them
    pieces = planner.range_splits(split, 0, 100)
    assert [(p.starting_offset, p.stopping_offset) for p in pieces] == [
        (0, 25),
        (25, 50),
        (50, 75),
        (75, 100),
    ]
    assert planner.range_splits(split, 0, 1) == [KafkaPartitionSplit("t", 0, 0, 1)]
    assert planner.is_finished(KafkaPartitionSplit("t", 0, 0, 5), 5)
    assert not planner.is_finished(split, 10**9)


@pytest.mark.parametrize(
    ("streaming", "extra", "option"),
    [
        (True, {"startingOffsets": '{"t1":{"0":5},"x":{"0":1}}'}, "startingOffsets"),
        (False, {"startingOffsetsByTimestamp": '{"t1":{"7":1700000000000}}'}, "startingOffsetsByTimestamp"),
        (False, {"endingOffsets": '{"t1":{"0":20,"3":4}}'}, "endingOffsets"),
    ],
)
def test_a_map_naming_a_partition_the_subscription_does_not_select_fails(
    streaming: bool, extra: dict[str, str], option: str
) -> None:
    """As Spark's Kafka source (the named partitions must be assigned): never silently ignored."""
    cluster = FakeCluster({"t1": [0, 1]})
    ctx = FakeContext()
    enum = KafkaSourceEnumerator(ctx, _opts(streaming, **extra), lambda: cluster)  # type: ignore[arg-type,return-value]
    enum.start()
    enum.add_reader(0)
    with pytest.raises(ConnectorError, match=f"option '{option}' names topic partitions .*not select"):
        ctx.run()
    assert ctx.assigned == []


def test_a_map_naming_some_subscribed_partitions_is_accepted() -> None:
    cluster = FakeCluster({"t1": [0, 1]})
    ctx = FakeContext()
    enum = KafkaSourceEnumerator(ctx, _opts(True, startingOffsets='{"t1":{"1":5}}'), lambda: cluster)  # type: ignore[arg-type,return-value]
    enum.start()
    enum.add_reader(0)
    ctx.run()
    assert sorted((s.partition, s.starting_offset) for s in ctx.assigned) == [(0, 0), (1, 5)]
