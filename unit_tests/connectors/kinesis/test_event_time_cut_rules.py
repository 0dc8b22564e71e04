"""The arrival-time rules of the Kinesis event-time cut (event_time.py), without an endpoint."""

from __future__ import annotations

from collections.abc import Callable

from connectors.kinesis.event_time import head_time, position_at_time
from connectors.kinesis.positions import ShardPosition

TRIM = ShardPosition.trim_horizon().to_json()
END = ShardPosition.shard_end().to_json()


def at(ms: int) -> object:
    return ShardPosition.at_timestamp(ms).to_json()


def first(ms: int | None, empty: bool = False) -> Callable[[], tuple[int | None, bool]]:
    return lambda: (ms, empty)


def test_a_cut_inside_an_open_range_is_an_at_timestamp_position() -> None:
    assert position_at_time(TRIM, at(5_000), 3_000, first(1_000)) == at(3_000)
    assert position_at_time(at(1_000), at(5_000), 3_000, first(None)) == at(3_000)


def test_a_cut_never_leaves_the_range() -> None:
    assert position_at_time(at(2_000), at(5_000), 1_000, first(2_500)) == at(2_000)  # before the start
    assert position_at_time(TRIM, at(5_000), 9_000, first(1_000)) == at(5_000)  # beyond the end
    assert position_at_time(at(2_000), at(2_000), 9_000, first(1_000)) == at(2_000)  # empty range


def test_a_cut_before_the_first_unread_record_keeps_the_start() -> None:
    assert position_at_time(TRIM, at(5_000), 3_000, first(3_000)) == TRIM
    assert position_at_time(TRIM, at(5_000), 3_000, first(3_001)) == TRIM


def test_a_closed_shard_with_nothing_left_ends_at_shard_end() -> None:
    assert position_at_time(at(2_000), END, 3_000, first(None, empty=True)) == END
    assert position_at_time(at(2_000), END, 3_000, first(2_100)) == at(3_000)
    assert position_at_time(at(2_000), END, 3_000, first(3_100)) == at(2_000)


def test_an_open_shard_kept_for_lack_of_data_does_not_hold_the_cut_at_its_old_position() -> None:
    assert head_time(at(1_000), complete_ms=9_000, kept=True) == 8_999
    assert head_time(at(5_000), complete_ms=9_000, kept=False) == 4_999  # a narrower planned end
    assert head_time(END, complete_ms=9_000, kept=False) == 8_999
    assert head_time(TRIM, complete_ms=None, kept=True) is None  # an unanswered probe: unknown


def test_a_shard_held_without_a_known_bound_has_no_head() -> None:
    # a child shard waiting for its parents (or a finished shard): kept, nothing probed
    assert head_time(at(1_000), complete_ms=None, kept=True) is None
