from __future__ import annotations

import pytest

from connector_base import InvalidOptionError
from connector_base.spark import Backlog, ReadLimitOptions, admit, parse_duration_ms, parse_positive_int
from connectors.sequence.options import SequenceOptions
from connectors.sequence.source import SequencePlanner
from connectors.sequence.split import SequenceSplit

PLANNER = SequencePlanner(SequenceOptions())


def ranges(*backlogs: int) -> dict:
    return {f"p{i}": (SequenceSplit(i, 0, b), 0, b) for i, b in enumerate(backlogs)}


def test_unlimited_reads_everything() -> None:
    assert admit(PLANNER, ranges(10, 20), None) == {"p0": 10, "p1": 20}


def test_max_records_is_spread_in_proportion_to_backlog_as_spark_rounds_it() -> None:
    """Spark's KafkaMicroBatchStream.rateLimit: 41 * 100/400 = 10.25 -> 10, 41 * 300/400 = 30.75 -> 30."""
    out = admit(PLANNER, ranges(100, 300, 0), ReadLimitOptions(max_records=41))
    assert out == {"p0": 10, "p1": 30, "p2": 0}


def test_a_small_split_is_not_starved_by_large_ones() -> None:
    """A share below one record rounds up (Spark: "Don't completely starve small topicpartitions")."""
    out = admit(PLANNER, ranges(1000, 1, 2), ReadLimitOptions(max_records=10))
    assert out == {"p0": 9, "p1": 1, "p2": 1}  # 10 * 1000/1003 = 9.97 -> 9; 0.01 and 0.02 -> 1


class _BytesPlanner(SequencePlanner):
    """Records of 100 bytes each, cut by bytes as Kafka's planner cuts them (whole records)."""

    def backlog(self, split, start, end):  # type: ignore[no-untyped-def]
        return Backlog(records=end - start, bytes=100 * (end - start))

    def cut(self, split, start, end, max_records, max_bytes):  # type: ignore[no-untyped-def]
        upto = end if max_records is None else min(end, start + max_records)
        return upto if max_bytes is None else min(upto, start + max_bytes // 100)


def test_a_small_split_is_not_starved_by_a_byte_maximum() -> None:
    """A byte share below one record admits one record (before: 0 for p1 and p2 until p0 drained)."""
    planner = _BytesPlanner(SequenceOptions())
    out = admit(planner, ranges(1000, 1, 2), ReadLimitOptions(max_bytes=1000))
    assert out == {"p0": 9, "p1": 1, "p2": 1}  # p0: 997 bytes -> 9 records; p1, p2: 0 bytes -> 1
    both = admit(planner, ranges(1000, 1, 2), ReadLimitOptions(max_bytes=1000, max_records=5))
    assert both == {"p0": 4, "p1": 1, "p2": 1}


def test_record_shares_use_double_arithmetic_as_spark() -> None:
    """22 * (15 / 22) is 14.999999999999998 in doubles: Spark admits 14 of the 15 records, and so do we."""
    out = admit(PLANNER, ranges(15, 7), ReadLimitOptions(max_records=22))
    assert 22 * (15 / 22) < 15
    assert out == {"p0": 14, "p1": 7}


def test_limit_above_backlog_reads_everything() -> None:
    assert admit(PLANNER, ranges(5, 6), ReadLimitOptions(max_records=100)) == {"p0": 5, "p1": 6}


def test_tiny_limit_still_makes_progress() -> None:
    out = admit(PLANNER, ranges(1000, 1000, 1000), ReadLimitOptions(max_records=1))
    assert out == {"p0": 1, "p1": 1, "p2": 1}  # each share 1/3 rounds up, as Spark's


def test_max_files_admits_whole_splits_in_order() -> None:
    out = admit(PLANNER, ranges(5, 6, 7), ReadLimitOptions(max_files=2))
    assert out == {"p0": 5, "p1": 6, "p2": 0}


def test_spark_limit_merges_with_options() -> None:
    from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

    opts = ReadLimitOptions(max_records=100, max_bytes=10)
    assert opts.merged_with_spark_limit(ReadAllAvailable()) is None
    merged = opts.merged_with_spark_limit(ReadMaxRows(50))
    assert merged is not None and merged.max_records == 50 and merged.max_bytes == 10
    assert isinstance(opts.spark_default(), ReadMaxRows)


def test_option_parsers_name_the_option() -> None:
    assert parse_positive_int({"maxFilesPerTrigger": "3"}, "maxFilesPerTrigger") == 3
    assert parse_positive_int({"maxfilespertrigger": "3"}, "maxFilesPerTrigger") == 3
    with pytest.raises(InvalidOptionError, match="'maxFilesPerTrigger'.*positive integer"):
        parse_positive_int({"maxFilesPerTrigger": "0"}, "maxFilesPerTrigger")
    assert parse_duration_ms({"d": "15s"}, "d") == 15000
    assert parse_duration_ms({"d": "250"}, "d") == 250
    with pytest.raises(InvalidOptionError, match="'d'"):
        parse_duration_ms({"d": "soon"}, "d")


@pytest.mark.parametrize(
    ("raw", "ms"),
    [
        ("0", 0),
        ("100", 100),
        ("250ms", 250),
        ("1s", 1000),
        ("2S", 2000),
        (" 3s ", 3000),
        ("1m", 60_000),
        ("1min", 60_000),
        ("15m", 900_000),
        ("1h", 3_600_000),
        ("1d", 86_400_000),
        ("1500us", 1),
        ("-1", -1),
        ("-1500us", -1),
    ],
)
def test_durations_as_spark_time_strings(raw: str, ms: int) -> None:
    """Spark's JavaUtils.timeStringAs (maxTriggerDelay): an integer, an optional unit, no blank inside."""
    assert parse_duration_ms({"d": raw}, "d") == ms


@pytest.mark.parametrize("raw", ["2 seconds", "15 m", "1.5s", "1w", "", "ms"])
def test_durations_spark_refuses_are_refused(raw: str) -> None:
    with pytest.raises(InvalidOptionError, match="'d'"):
        parse_duration_ms({"d": raw}, "d")


def test_min_above_max_is_rejected() -> None:
    with pytest.raises(InvalidOptionError):
        ReadLimitOptions(max_records=5, min_records=10)


def test_the_batches_of_a_checkpoint_written_by_spark_are_reproduced() -> None:
    """unit_tests/connectors/kafka/golden/spark_kafka_checkpoint: Spark's Kafka source, partitions of 5, 3
    and 7 records, maxOffsetsPerTrigger=9, AvailableNow: batch 0 ends at {0: 3, 1: 1, 2: 4}, batch 1 at
    {0: 5, 1: 3, 2: 7}."""
    ends = (5, 3, 7)
    first = admit(PLANNER, ranges(*ends), ReadLimitOptions(max_records=9))
    assert first == {"p0": 3, "p1": 1, "p2": 4}
    second = {f"p{i}": (SequenceSplit(i, 0, e), first[f"p{i}"], e) for i, e in enumerate(ends)}
    assert admit(PLANNER, second, ReadLimitOptions(max_records=9)) == {"p0": 5, "p1": 3, "p2": 7}
