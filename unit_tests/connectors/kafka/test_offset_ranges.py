"""Spark tasks per offset range: ``minPartitions`` and ``maxRecordsPerPartition`` as Spark's
``KafkaOffsetRangeCalculator`` (ceil(size / max) near-equal pieces, then minPartitions by share)."""

from __future__ import annotations

import pytest

from connector_base import InvalidOptionError
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.planner import KafkaSplitPlanner, _spark_pieces
from connectors.kafka.split import KafkaPartitionSplit

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}


def test_max_records_cuts_each_range_into_ceil_size_over_max_near_equal_pieces() -> None:
    assert _spark_pieces(0, 10, [10, 3], None, 4) == [(0, 3), (3, 6), (6, 10)]
    assert _spark_pieces(100, 103, [10, 3], None, 4) == [(100, 103)]
    assert _spark_pieces(0, 8, [8], None, 4) == [(0, 4), (4, 8)]


def test_min_partitions_applies_after_max_records_when_still_too_few() -> None:
    # maxRecords 50 cuts 100 into 2 pieces; minPartitions 4 > 2, so each piece is cut in round(50/100*4)=2
    assert _spark_pieces(0, 100, [100], 4, 50) == [(0, 25), (25, 50), (50, 75), (75, 100)]
    # enough pieces already: minPartitions changes nothing
    assert _spark_pieces(0, 100, [100], 2, 25) == [(0, 25), (25, 50), (50, 75), (75, 100)]
    assert _spark_pieces(0, 100, [100], None, None) == [(0, 100)]


def test_option_is_parsed_and_used_by_the_planner() -> None:
    opts = KafkaSourceOptions.parse({**BASE, "maxRecordsPerPartition": "30"}, streaming=False)
    planner = KafkaSplitPlanner(opts)
    pieces = planner.range_splits(KafkaPartitionSplit("t", 0, 0), 0, 100)
    quarters = [(0, 25), (25, 50), (50, 75), (75, 100)]
    assert [(p.starting_offset, p.stopping_offset) for p in pieces] == quarters
    with pytest.raises(InvalidOptionError, match="maxRecordsPerPartition"):
        KafkaSourceOptions.parse({**BASE, "maxRecordsPerPartition": "0"}, streaming=False)
