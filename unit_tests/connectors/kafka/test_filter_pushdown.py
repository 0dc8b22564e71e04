"""``KafkaFilters``: combining pushed filters and narrowing offset ranges (offset lookups faked)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from connector_base.spark.filters import ColumnFilter, FilterSupport
from connectors.kafka.filter_pushdown import KafkaFilters, kafka_filter_support
from connectors.kafka.positions import TopicPartition


class _Times:
    """Each partition's record ``i`` has timestamp ``1000 + i`` ms."""

    def earliest(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        return dict.fromkeys(partitions, 0)

    def latest(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        return dict.fromkeys(partitions, 100)

    def for_times(self, timestamps: Mapping[TopicPartition, int]) -> dict[TopicPartition, int | None]:
        return {tp: (ms - 1000 if ms - 1000 < 100 else None) for tp, ms in timestamps.items()}

    def committed(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int | None]:
        return dict.fromkeys(partitions)


def _ts(ms: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)


def test_support() -> None:
    assert kafka_filter_support(ColumnFilter("topic", "in", ("a", "b"))) is FilterSupport.EXACT
    assert kafka_filter_support(ColumnFilter("partition", "=", (1,))) is FilterSupport.EXACT
    assert kafka_filter_support(ColumnFilter("offset", "<=", (5,))) is FilterSupport.EXACT
    assert kafka_filter_support(ColumnFilter("timestamp", ">=", (_ts(1),))) is FilterSupport.NARROWS
    assert kafka_filter_support(ColumnFilter("timestamp", "=", (_ts(1),))) is FilterSupport.NONE
    assert kafka_filter_support(ColumnFilter("partition", ">", (1,))) is FilterSupport.NONE


def test_ranges() -> None:
    ranges = {("a", 0): (0, 100), ("a", 1): (0, 100), ("b", 0): (0, 100)}
    k = KafkaFilters.of(
        [
            ColumnFilter("topic", "=", ("a",)),
            ColumnFilter("partition", "in", (1, 2)),
            ColumnFilter("offset", ">", (9,)),
            ColumnFilter("offset", "<", (90,)),
        ]
    )
    assert k.bounds(ranges, _Times(), set()) == {("a", 1): (10, 90)}


def test_timestamps_in_milliseconds() -> None:
    ranges = {("a", 0): (0, 100)}
    # >= 1020.5 ms means from 1021 ms; > 1020.5 ms too; > 1020 ms means from 1021 ms
    for op, ms in ((">=", 1020.5), (">", 1020.5), (">", 1020)):
        k = KafkaFilters.of([ColumnFilter("timestamp", op, (_ts(ms),))])
        assert k.bounds(ranges, _Times(), set()) == {("a", 0): (21, 100)}
    upper = KafkaFilters.of([ColumnFilter("timestamp", "<=", (_ts(1050),))])
    assert upper.bounds(ranges, _Times(), {"a"}) == {("a", 0): (0, 51)}
    # CreateTime topics keep their end: a later record may be older
    assert upper.bounds(ranges, _Times(), set()) == {("a", 0): (0, 100)}
    # nothing at or after the bound: nothing to read
    late = KafkaFilters.of([ColumnFilter("timestamp", ">=", (_ts(5000),))])
    start, end = late.bounds(ranges, _Times(), set())[("a", 0)]
    assert start >= end
