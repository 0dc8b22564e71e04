"""The arrival-time rules of ``kinesis-unified``'s event-time cut (``eventTime.alignment=cut``).

Event time is ``ApproximateArrivalTimestamp``. The service stamps it when a record arrives, so no
record can ever arrive older than the service's clock: at a planning cut ``C - cutSafetyMarginMs``
(planner.py) every open shard is complete up to that cut, whatever it holds. So:

* a position by time ``t`` is ``AT_TIMESTAMP(t)``, the position the planner's own cuts already use
  (the first record in sequence order with arrival ``>= t``; replayable because ``t`` is at most the
  range's end, itself at most the planning cut). It is the range's start when the shard's first
  unread record (the planner probes it anyway) is at or after ``t``, and its end when ``t`` is at or
  beyond an ``AT_TIMESTAMP`` end, or when a closed shard has nothing left before ``SHARD_END``;
* a shard's head time is where it is known complete, minus 1 ms: an open shard's planning cut (or
  its range's ``AT_TIMESTAMP`` end when that is earlier), not its newest record, since any record
  it receives later is newer than the cut. So a shard whose producer is quiet never holds the cut
  back, and ``alignment.maxDrift`` has nothing to bound (every open shard is at the service's now);
* the time at a position is the arrival of the record there, from the planner's probe.

What the cut does for Kinesis is order a backlog: under a read limit, the records that arrived
first (in any shard) are read first, so a shard with an older backlog is not read beside a newer
one and dropped as late.
"""

from __future__ import annotations

from collections.abc import Callable

from connector_base.spark import Position
from connectors.kinesis.positions import PositionKind, ShardPosition

__all__ = ["FirstRecord", "head_time", "position_at_time"]

FirstRecord = Callable[[], tuple[int | None, bool]]
"""``() -> (arrival ms of the first record at a range's start, whether the shard has none there)``."""


def position_at_time(start: Position, end: Position, t_ms: int, first: FirstRecord) -> Position:
    """The first position in ``[start, end]`` whose record arrived at or after ``t_ms``."""
    if start == end:
        return start
    begin = ShardPosition.from_json(start)
    stop = ShardPosition.from_json(end)
    if begin.timestamp_ms is not None and t_ms <= begin.timestamp_ms:
        return start  # an AT_TIMESTAMP start
    if stop.kind is PositionKind.AT_TIMESTAMP:
        assert stop.timestamp_ms is not None
        if t_ms >= stop.timestamp_ms:
            return end
    elif not stop.is_shard_end:
        return end  # an end the cut cannot be placed before (none in streaming plans today)
    first_ms, empty = first()
    if empty:
        # nothing at the start: an open shard's range would be empty (keep it), a closed one is done
        return end if stop.is_shard_end else start
    if first_ms is not None and first_ms >= t_ms:
        return start
    return ShardPosition.at_timestamp(t_ms).to_json()


def head_time(end: Position, complete_ms: int | None, kept: bool) -> int | None:
    """The shard's head for the cut: known complete before ``complete_ms`` (and before ``end``).

    ``kept``: the planner kept the shard at its position because nothing is there to read, so
    ``end`` is only where the shard was read to, not a bound on its data.
    """
    stop = ShardPosition.from_json(end)
    bound = complete_ms
    if stop.kind is PositionKind.AT_TIMESTAMP and not kept:
        assert stop.timestamp_ms is not None
        bound = stop.timestamp_ms if bound is None else min(bound, stop.timestamp_ms)
    return None if bound is None else bound - 1
