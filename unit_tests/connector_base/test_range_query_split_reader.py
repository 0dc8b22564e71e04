from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from typing_extensions import override

from connector_base import RangeQuerySplitReader, SourceSplit, SplitsAddition, SplitsRemoval


@dataclass(frozen=True, slots=True)
class _Split(SourceSplit):
    name: str
    start: int
    end: int = -1

    @property
    def split_id(self) -> str:
        return self.name


class _ListReader(RangeQuerySplitReader[tuple[str, int], _Split]):
    fetch_size = 3

    def __init__(self, data: dict[str, list[int]]) -> None:
        super().__init__()
        self.data = data
        self.queries: list[tuple[str, int, int | None, int]] = []

    @override
    def query(self, split: _Split, start: int, end: int | None, limit: int) -> Sequence[tuple[str, int]]:
        self.queries.append((split.name, start, end, limit))
        hits = [p for p in self.data[split.name] if p >= start and (end is None or p < end)]
        return [(split.name, p) for p in hits[:limit]]

    @override
    def position_after(self, record: tuple[str, int]) -> int:
        return record[1] + 1

    @override
    def close(self) -> None:
        pass


def _drain(reader: _ListReader, rounds: int) -> tuple[list[tuple[str, int]], set[str]]:
    records: list[tuple[str, int]] = []
    finished: set[str] = set()
    for _ in range(rounds):
        batch = reader.fetch()
        while batch.next_split() is not None:
            records += batch.records_of_current_split()
        finished |= batch.finished_splits()
    return records, finished


def test_a_bounded_split_is_read_in_fetch_size_queries_up_to_its_end_with_gaps() -> None:
    reader = _ListReader({"t": [1, 2, 4, 7, 8, 9, 12]})
    reader.handle_splits_changes(SplitsAddition([_Split("t", 2, 10)]))
    records, finished = _drain(reader, 4)
    assert records == [("t", p) for p in (2, 4, 7, 8, 9)]
    assert finished == {"t"}
    assert [q[3] for q in reader.queries] == [3, 3]  # the second query returned fewer: done


def test_an_unbounded_split_picks_up_records_that_appear_later() -> None:
    data = {"t": [1, 2]}
    reader = _ListReader(data)
    reader.handle_splits_changes(SplitsAddition([_Split("t", 1)]))
    first, finished = _drain(reader, 2)
    data["t"] += [3, 5]
    second, _ = _drain(reader, 2)
    assert first + second == [("t", 1), ("t", 2), ("t", 3), ("t", 5)]
    assert not finished


def test_a_removed_split_is_no_longer_queried() -> None:
    reader = _ListReader({"t": [1]})
    reader.handle_splits_changes(SplitsAddition([_Split("t", 1)]))
    reader.handle_splits_changes(SplitsRemoval([_Split("t", 1)]))
    reader.wake_up()
    assert _drain(reader, 1) == ([], set())
    assert reader.queries == []
