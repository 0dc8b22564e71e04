"""The planner's admission-control cut, on scanned (timestamp, bytes) lists (no network)."""

from __future__ import annotations

from connectors.kinesis.options import KinesisOptions
from connectors.kinesis.planner import KinesisSplitPlanner
from connectors.kinesis.positions import ShardPosition
from connectors.kinesis.split import KinesisShardSplit

SPLIT = KinesisShardSplit("s", "shard-0", ShardPosition.trim_horizon())
START = ShardPosition.at_timestamp(100).to_json()
END = ShardPosition.at_timestamp(1000).to_json()


def _planner(scanned: list[tuple[int, int]], **options: str) -> KinesisSplitPlanner:
    planner = KinesisSplitPlanner(
        KinesisOptions.parse({"streamName": "s", "region": "us-east-1", **options}), True
    )
    planner._scans[(SPLIT.shard_id, repr(START), repr(END))] = scanned
    return planner


def test_cut_at_the_first_record_that_does_not_fit() -> None:
    planner = _planner([(100, 10), (101, 10), (105, 10), (107, 10)], maxRecordsPerTrigger="2")
    assert planner.cut(SPLIT, START, END, 2, None) == ShardPosition.at_timestamp(105).to_json()
    assert planner.backlog(SPLIT, START, END).records == 4


def test_records_sharing_the_boundary_millisecond_move_together() -> None:
    planner = _planner([(100, 10), (101, 10), (101, 10), (107, 10)], maxRecordsPerTrigger="2")
    # the third record does not fit; it shares 101 with the second, so both go to the next batch
    assert planner.cut(SPLIT, START, END, 2, None) == ShardPosition.at_timestamp(101).to_json()


def test_one_millisecond_larger_than_the_limit_cannot_be_cut() -> None:
    planner = _planner([(100, 10), (100, 10), (100, 10)], maxRecordsPerTrigger="1")
    assert planner.cut(SPLIT, START, END, 1, None) == START


def test_byte_limit_and_whole_range() -> None:
    planner = _planner([(100, 10), (102, 10), (104, 10)], maxBytesPerTrigger="25")
    assert planner.cut(SPLIT, START, END, None, 25) == ShardPosition.at_timestamp(104).to_json()
    assert planner.cut(SPLIT, START, END, None, 30) == END


def test_finished_positions() -> None:
    planner = _planner([], endingTimestamp="5000")
    assert planner.is_finished(SPLIT, ShardPosition.shard_end().to_json())
    assert planner.is_finished(SPLIT, ShardPosition.at_timestamp(5000).to_json())
    assert not planner.is_finished(SPLIT, ShardPosition.at_timestamp(4999).to_json())


def test_time_window_counts_from_the_first_record() -> None:
    from connectors.kinesis.planner import window_cut

    at_100 = ShardPosition.at_timestamp(100)
    assert window_cut(10_000, at_100, None, None) == 10_000
    assert window_cut(10_000, at_100, 150, 1000) == 1150
    assert window_cut(10_000, at_100, 5000, 1000) == 6000  # an idle stretch is skipped, progress is made
    assert window_cut(10_000, at_100, None, 1000) == 1100
    assert window_cut(500, at_100, 150, 1000) == 500
    assert window_cut(10_000, ShardPosition.trim_horizon(), None, 1000) == 10_000
