"""``KinesisFilters``: combining pushed filters into shard choices and time cuts."""

from __future__ import annotations

import datetime as dt

from connector_base.spark.filters import ColumnFilter, FilterSupport
from connectors.kinesis.filter_pushdown import ARRIVAL_COLUMN, KinesisFilters, kinesis_filter_support
from connectors.kinesis.positions import ShardPosition
from connectors.kinesis.split import KinesisShardSplit


def _ts(ms: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)


def _split(shard: str = "shardId-000000000001") -> KinesisShardSplit:
    return KinesisShardSplit("s", shard, ShardPosition.trim_horizon(), ShardPosition.at_timestamp(5000))


def test_support() -> None:
    assert kinesis_filter_support(ColumnFilter("shardId", "in", ("a", "b"))) is FilterSupport.EXACT
    assert kinesis_filter_support(ColumnFilter("streamName", "=", ("s",))) is FilterSupport.EXACT
    assert kinesis_filter_support(ColumnFilter(ARRIVAL_COLUMN, ">=", (_ts(1),))) is FilterSupport.NARROWS
    assert kinesis_filter_support(ColumnFilter(ARRIVAL_COLUMN, "<", (_ts(1),))) is FilterSupport.NARROWS
    assert kinesis_filter_support(ColumnFilter(ARRIVAL_COLUMN, "=", (_ts(1),))) is FilterSupport.NONE
    assert kinesis_filter_support(ColumnFilter(ARRIVAL_COLUMN, "is_null", ())) is FilterSupport.NONE
    assert kinesis_filter_support(ColumnFilter("sequenceNumber", ">", ("1",))) is FilterSupport.NONE


def test_bounds_in_whole_milliseconds() -> None:
    # the column shows whole ms: > 1000.4 means >= 1001, >= 1000.4 means >= 1001, < 2000.4 means <= 2000
    k = KinesisFilters.of(
        [
            ColumnFilter(ARRIVAL_COLUMN, ">=", (_ts(1000.4),)),
            ColumnFilter(ARRIVAL_COLUMN, "<", (_ts(2000.4),)),
        ]
    )
    assert (k.from_ms, k.until_ms) == (1001, 2001)
    k = KinesisFilters.of(
        [ColumnFilter(ARRIVAL_COLUMN, ">", (_ts(1000),)), ColumnFilter(ARRIVAL_COLUMN, "<=", (_ts(2000),))]
    )
    assert (k.from_ms, k.until_ms) == (1001, 2001)
    # a start is one ms early (an endpoint may keep finer timestamps than it returns)
    assert k.start(ShardPosition.trim_horizon()) == ShardPosition.at_timestamp(1000)
    assert k.start(ShardPosition.at_timestamp(1500)) == ShardPosition.at_timestamp(1500)
    seq = ShardPosition.after_sequence_number("7")
    assert k.start(seq) == seq
    assert k.end(ShardPosition.shard_end()) == ShardPosition.at_timestamp(2001)
    assert k.end(ShardPosition.at_timestamp(1800)) == ShardPosition.at_timestamp(1800)
    assert k.keeps(_split())
    assert KinesisFilters.is_empty(ShardPosition.at_timestamp(3000), k.end(ShardPosition.shard_end()))


def test_shards_streams_and_empty_windows() -> None:
    k = KinesisFilters.of([ColumnFilter("shardId", "in", ("a", "b")), ColumnFilter("shardId", "=", ("b",))])
    assert k.keeps(_split("b")) and not k.keeps(_split("a"))
    assert not KinesisFilters.of([ColumnFilter("streamName", "=", ("other",))]).keeps(_split())
    t = _ts(1000)
    empty = KinesisFilters.of(
        [ColumnFilter(ARRIVAL_COLUMN, ">=", (t,)), ColumnFilter(ARRIVAL_COLUMN, "<", (t,))]
    )
    assert not empty.keeps(_split())
