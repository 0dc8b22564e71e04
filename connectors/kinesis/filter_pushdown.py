"""Kinesis's answer to pushed filters: which shards a batch read plans, and where each range starts and ends.

* ``streamName`` / ``shardId`` ``=`` and ``IN``: other shards are not planned (exact);
* ``approximateArrivalTimestamp >= / >``: each shard starts at ``AT_TIMESTAMP`` of the bound, so
  GetShardIterator skips the records before it on the service;
* ``approximateArrivalTimestamp < / <=``: each shard's range ends before the first record at or
  after the bound (an ``AT_TIMESTAMP`` end cut), so the reader stops fetching there.

Both rest on what the planner's cuts already rest on (docs/kinesis.md): within a shard, arrival
timestamps do not decrease in sequence order. Timestamp filters narrow the ranges but stay with
Spark, which evaluates them on every row read. The column holds whole milliseconds; a start is
one millisecond early, so an endpoint that keeps finer timestamps than it returns loses nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from connector_base.spark.filters import ColumnFilter, FilterSupport, millisecond_bound
from connectors.kinesis.positions import PositionKind, ShardPosition
from connectors.kinesis.split import KinesisShardSplit

__all__ = ["ARRIVAL_COLUMN", "KinesisFilters", "kinesis_filter_support"]

ARRIVAL_COLUMN = "approximateArrivalTimestamp"
_RANGE_OPS = (">", ">=", "<", "<=")
_START_SLACK_MS = 1


def kinesis_filter_support(f: ColumnFilter) -> FilterSupport:
    """How far the Kinesis planner answers ``f``."""
    strings = all(isinstance(v, str) for v in f.values)
    if f.column in ("streamName", "shardId") and f.op in ("=", "in") and strings:
        return FilterSupport.EXACT
    if f.column == ARRIVAL_COLUMN and f.op in _RANGE_OPS and isinstance(f.value, dt.datetime):
        return FilterSupport.NARROWS
    return FilterSupport.NONE


@dataclass
class KinesisFilters:
    """The pushed filters, combined: allowed streams and shards, and an arrival-time range in whole
    milliseconds ``[from_ms, until_ms)`` (as the column shows them)."""

    streams: set[str] | None = None
    shards: set[str] | None = None
    from_ms: int | None = None
    until_ms: int | None = None
    """Exclusive."""
    applied: list[ColumnFilter] = field(default_factory=list)

    @staticmethod
    def of(filters: Sequence[ColumnFilter]) -> KinesisFilters:
        """Combine ``filters`` (each must be supported by ``kinesis_filter_support``)."""
        k = KinesisFilters(applied=list(filters))
        for f in filters:
            if f.column in ("streamName", "shardId"):
                values = {str(v) for v in f.values}
                if f.column == "streamName":
                    k.streams = values if k.streams is None else k.streams & values
                else:
                    k.shards = values if k.shards is None else k.shards & values
            elif f.op in (">", ">="):
                lo = millisecond_bound(f.op, f.value)
                k.from_ms = lo if k.from_ms is None else max(k.from_ms, lo)
            else:
                hi = millisecond_bound(f.op, f.value)
                k.until_ms = hi if k.until_ms is None else min(k.until_ms, hi)
        return k

    def keeps(self, split: KinesisShardSplit) -> bool:
        """Whether ``split``'s shard may hold matching records."""
        lo, hi = self.from_ms, self.until_ms
        return (
            not (lo is not None and hi is not None and lo >= hi)
            and (self.streams is None or split.stream in self.streams)
            and (self.shards is None or split.shard_id in self.shards)
        )

    def start(self, start: ShardPosition) -> ShardPosition:
        """``start`` moved up to the lower time bound (positions after a sequence number stay)."""
        if self.from_ms is None:
            return start
        bound = self.from_ms - _START_SLACK_MS
        match start.kind:
            case PositionKind.TRIM_HORIZON:
                return ShardPosition.at_timestamp(bound)
            case PositionKind.AT_TIMESTAMP:
                assert start.timestamp_ms is not None
                return ShardPosition.at_timestamp(max(start.timestamp_ms, bound))
            case _:
                return start

    def end(self, end: ShardPosition) -> ShardPosition:
        """``end`` moved back to the upper time bound."""
        if self.until_ms is None:
            return end
        if end.kind is PositionKind.AT_TIMESTAMP:
            assert end.timestamp_ms is not None
            return ShardPosition.at_timestamp(min(end.timestamp_ms, self.until_ms))
        return ShardPosition.at_timestamp(self.until_ms)

    @staticmethod
    def is_empty(start: ShardPosition, end: ShardPosition) -> bool:
        """Whether ``[start, end)`` holds no record for certain (two time cuts, in order or equal)."""
        return (
            start.kind is PositionKind.AT_TIMESTAMP
            and end.kind is PositionKind.AT_TIMESTAMP
            and start.timestamp_ms is not None
            and end.timestamp_ms is not None
            and start.timestamp_ms >= end.timestamp_ms
        )
