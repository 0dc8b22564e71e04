"""How the bridge packs a plan's ranges into Spark partitions (``RangePacking``, ``bridge._pack``)."""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest

from connector_base.spark.bridge import _pack
from connector_base.spark.planner import Backlog, Position, RangePacking, SplitPlanner
from connector_base.split import SourceSplit

BY_RECORDS = RangePacking(target=100, open_cost=10, measure="records")


class _Split(SourceSplit):
    def __init__(self, name: str, packing: RangePacking | None = BY_RECORDS, pieces: int = 1) -> None:
        self.name, self.packing, self.pieces = name, packing, pieces

    def split_id(self) -> str:
        return self.name


class _Planner(SplitPlanner[_Split]):
    """Ranges ``[start, end)`` of records; each split says its packing and how many pieces it is cut into."""

    def start_position(self, split: _Split) -> Position:
        return 0

    def end_positions(self, current: Mapping[str, tuple[_Split, Position]]) -> dict[str, Position]:
        return {}

    def backlog(self, split: _Split, start: Position, end: Position) -> Backlog:
        return Backlog(records=int(end) - int(start), bytes=None)

    def cut(
        self, split: _Split, start: Position, end: Position, max_records: Any, max_bytes: Any
    ) -> Position:
        return end

    def range_splits(self, split: _Split, start: Position, end: Position) -> list[Any]:
        return [f"{split.name}.{i}" for i in range(split.pieces)]

    def is_finished(self, split: _Split, position: Position) -> bool:
        return False

    def packing(self, split: _Split) -> RangePacking | None:
        return split.packing


SOURCE = SimpleNamespace(split_serializer=SimpleNamespace(dumps=str))


def _plan(ranges: list[tuple[_Split, int, int]], parallelism: int) -> list[list[str]]:
    return [p.splits for p in _pack(_Planner(), SOURCE, ranges, parallelism)]  # type: ignore[arg-type]


def _small(n: int, records: int = 5, **kw: Any) -> list[tuple[_Split, int, int]]:
    return [(_Split(f"s{i}", **kw), 0, records) for i in range(n)]


def test_small_ranges_share_about_parallelism_partitions_in_plan_order() -> None:
    # six ranges weighing 5 + 10 each: 90 in all, 45 per partition for a parallelism of 2
    assert _plan(_small(6), 2) == [["s0.0", "s1.0", "s2.0"], ["s3.0", "s4.0", "s5.0"]]


def test_never_fewer_partitions_than_the_parallelism_when_there_are_enough_ranges() -> None:
    assert len(_plan(_small(6), 6)) == 6
    assert len(_plan(_small(6), 4)) >= 4


def test_a_partition_holds_no_more_than_the_target() -> None:
    # 40 ranges of weight 15 with a parallelism of 1: the target (100) binds, 6 ranges per partition
    plan = _plan(_small(40), 1)
    assert [len(p) for p in plan] == [6] * 6 + [4]
    # a range weighing more than the target keeps a partition of its own
    assert _plan([(_Split("big"), 0, 500), *_small(2)], 1) == [["big.0"], ["s0.0", "s1.0"]]


def test_without_packing_every_piece_has_its_own_partition() -> None:
    assert _plan(_small(4, packing=None), 1) == [["s0.0"], ["s1.0"], ["s2.0"], ["s3.0"]]


def test_pieces_of_one_range_never_share_a_partition() -> None:
    # a range cut into three pieces is meant to be read in parallel, however small its pieces are
    plan = _plan([(_Split("cut", pieces=3), 0, 6), *_small(1)], 1)
    assert plan == [["cut.0"], ["cut.1"], ["cut.2", "s0.0"]]


def test_ranges_packed_differently_never_share_a_partition() -> None:
    other = RangePacking(target=100, open_cost=10, measure="bytes")
    ranges = [*_small(2), *_small(2, packing=other)]
    ranges = [(_Split(f"r{i}", s.packing), a, b) for i, (s, a, b) in enumerate(ranges)]
    assert _plan(ranges, 1) == [["r0.0", "r1.0"], ["r2.0", "r3.0"]]


def test_a_packing_weighs_in_its_own_measure() -> None:
    assert BY_RECORDS.weight(Backlog(records=7, bytes=9000)) == 17
    assert RangePacking(100, 10, "bytes").weight(Backlog(records=7, bytes=None)) == 10
    with pytest.raises(ValueError, match="'bytes' or 'records'"):
        RangePacking(100, 10, "rows")
