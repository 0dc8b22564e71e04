"""Starting/stopping offset strategies against a fake ``OffsetLookup`` (no network)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from connector_base import ConnectorError
from connectors.kafka.positions import EARLIEST, LATEST, OffsetsInitializer, TimestampStrategy, TopicPartition

A0, A1, B0 = ("a", 0), ("a", 1), ("b", 0)


class FakeLookup:
    """Partitions hold offsets [10, 100); record at offset o has timestamp 1000 + o."""

    def __init__(self, committed: Mapping[TopicPartition, int] | None = None) -> None:
        self.calls: list[str] = []
        self._committed = dict(committed or {})

    def earliest(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        self.calls.append("earliest")
        return {tp: 10 for tp in partitions}

    def latest(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        self.calls.append("latest")
        return {tp: 100 for tp in partitions}

    def for_times(self, timestamps: Mapping[TopicPartition, int]) -> dict[TopicPartition, int | None]:
        self.calls.append("for_times")
        return {tp: (max(10, ms - 1000) if ms - 1000 < 100 else None) for tp, ms in timestamps.items()}

    def committed(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int | None]:
        self.calls.append("committed")
        return {tp: self._committed.get(tp) for tp in partitions}


def test_earliest_latest_batched() -> None:
    lookup = FakeLookup()
    assert OffsetsInitializer.earliest().resolve([A0, A1, B0], lookup) == {A0: 10, A1: 10, B0: 10}
    assert OffsetsInitializer.latest().resolve([A0, A1], lookup) == {A0: 100, A1: 100}
    assert lookup.calls == ["earliest", "latest"]  # one request per kind, not per partition


def test_specific_offsets_with_symbols_and_default() -> None:
    lookup = FakeLookup()
    init = OffsetsInitializer.specific({A0: 42, A1: LATEST}, EARLIEST)
    assert init.resolve([A0, A1, B0], lookup) == {A0: 42, A1: 100, B0: 10}


def test_timestamps_and_strategies() -> None:
    lookup = FakeLookup()
    assert OffsetsInitializer.timestamp(1050, TimestampStrategy.ERROR, "starting").resolve([A0], lookup) == {
        A0: 50
    }
    with pytest.raises(ConnectorError, match="no offset of a-0"):
        OffsetsInitializer.timestamp(5000, TimestampStrategy.ERROR, "starting").resolve([A0], lookup)
    later = OffsetsInitializer.timestamp(5000, TimestampStrategy.LATEST, "starting").resolve([A0], lookup)
    assert later == {A0: 100}
    per = OffsetsInitializer.timestamps({A0: 1020}, TimestampStrategy.ERROR, "starting").resolve(
        [A0, A1], lookup
    )
    assert per == {A0: 20, A1: 10}  # a partition the map does not name starts at earliest
    ending = OffsetsInitializer.timestamps({A0: 1020}, TimestampStrategy.LATEST, "ending").resolve(
        [A0, A1], lookup
    )
    assert ending == {A0: 20, A1: 100}
    assert OffsetsInitializer.timestamp(9999, TimestampStrategy.LATEST, "ending").resolve([A0], lookup) == {
        A0: 100
    }


def test_committed_with_fallbacks() -> None:
    lookup = FakeLookup({A0: 33})
    assert OffsetsInitializer.committed(EARLIEST).resolve([A0, A1], lookup) == {A0: 33, A1: 10}
    assert OffsetsInitializer.committed(LATEST).resolve([A0, A1], lookup) == {A0: 33, A1: 100}
    with pytest.raises(ConnectorError, match="no committed offset for a-1"):
        OffsetsInitializer.committed(None).resolve([A0, A1], lookup)
