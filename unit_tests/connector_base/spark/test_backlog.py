"""Backlog sizing on the driver: hysteresis, the limits of a trigger, the report."""

from __future__ import annotations

import pytest

from connector_base import InvalidOptionError
from connector_base.spark import ReadLimitOptions
from connector_base.spark.backlog import BacklogOptions, BacklogSizing
from connectors.sequence.options import SequenceOptions
from connectors.sequence.source import SequencePlanner
from connectors.sequence.split import SequenceSplit

PLANNER = SequencePlanner(SequenceOptions())
NORMAL = ReadLimitOptions(max_records=100)


def ranges(*lags: int) -> dict:
    return {f"p{i}": (SequenceSplit(i, 0, 10**9), 0, n) for i, n in enumerate(lags)}


def sizing(**options: str) -> BacklogSizing:
    return BacklogSizing(BacklogOptions.parse(options, NORMAL), clock=lambda: 1.0)


def test_enters_at_one_backlog_batch_and_leaves_when_one_normal_batch_holds_the_lag() -> None:
    s = sizing(**{"backlog.maxRecordsPerTrigger": "1000"})
    s.update(PLANNER, ranges(400, 500), False)
    assert not s.in_backlog
    s.update(PLANNER, ranges(600, 500), False)
    assert s.in_backlog
    assert s.limits(NORMAL) == ReadLimitOptions(max_records=1000)
    s.update(PLANNER, ranges(60, 50), False)  # below enter, above exit: stays (hysteresis)
    assert s.in_backlog
    s.update(PLANNER, ranges(60, 40), False)
    assert not s.in_backlog
    assert s.limits(NORMAL) == NORMAL


def test_explicit_thresholds_and_the_enumerator_flag() -> None:
    s = sizing(
        **{"backlog.maxRecordsPerTrigger": "1000", "backlog.enterRecords": "50", "backlog.exitRecords": "0"}
    )
    s.update(PLANNER, ranges(49), False)
    assert not s.in_backlog
    s.update(PLANNER, ranges(0), True)
    assert s.in_backlog
    s.update(PLANNER, ranges(1), False)
    assert s.in_backlog
    s.update(PLANNER, ranges(0), False)
    assert not s.in_backlog


def test_report_has_latest_positions_lag_the_worst_split_and_the_flag() -> None:
    s = sizing(**{"backlog.maxRecordsPerTrigger": "1000"})
    s.update(PLANNER, ranges(700, 500, 0), False)
    report = s.report()
    assert report is not None
    assert report["latest"] == {"p0": 700, "p1": 500, "p2": 0}
    assert report["backlog"] is True
    lag = report["lag"]
    assert lag["records"] == 1200 and lag["pendingSplits"] == 2
    assert lag["maxSplit"]["id"] == "p0" and lag["maxSplit"]["records"] == 700


def test_read_all_available_stays_unlimited() -> None:
    s = sizing(**{"backlog.maxRecordsPerTrigger": "1000"})
    s.update(PLANNER, ranges(5000), False)
    assert s.limits(None) is None


def test_a_planner_counts_up_to_the_backlog_maximum_and_entry_threshold_in_every_trigger() -> None:
    # a planner that counts by reading, capped, must see the lag the decision compares with
    assert sizing().counting_limits(NORMAL) == NORMAL
    assert sizing(**{"backlog.maxRecordsPerTrigger": "1000"}).counting_limits(NORMAL).max_records == 1000
    s = sizing(**{"backlog.maxRecordsPerTrigger": "1000", "backlog.enterRecords": "5000"})
    assert s.counting_limits(NORMAL) == ReadLimitOptions(max_records=5000)
    assert s.counting_limits(None) is None
    # no cap where no maximum is in force: the entry threshold alone must not limit a batch
    assert s.counting_limits(ReadLimitOptions()) == ReadLimitOptions()
    assert sizing(**{"backlog.enterBytes": "50000"}).counting_limits(NORMAL) == NORMAL


def test_spark_is_told_the_larger_limit() -> None:
    opts = BacklogOptions.parse({"backlog.maxRecordsPerTrigger": "1000"}, NORMAL)
    assert opts.spark_limits(NORMAL).max_records == 1000


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"backlog.maxRecordsPerTrigger": "50"}, "at least the normal per-trigger records maximum (100)"),
        ({"backlog.maxBytesPerTrigger": "5000"}, "only with a normal per-trigger bytes maximum"),
        ({"backlog.maxRecordsPerTrigger": "x"}, "a positive integer"),
        ({"backlog.enterRecords": "10", "backlog.exitRecords": "10"}, "below backlog.enterRecords"),
        ({"backlog.exitRecords": "10"}, "together with backlog.enterRecords"),
        ({"backlog.enterLagMs": "soon"}, "a duration"),
        ({"backlog.maxRecordPerTrigger": "500"}, "one of the backlog options"),
    ],
)
def test_bad_backlog_options_name_the_option(options: dict, fragment: str) -> None:
    with pytest.raises(InvalidOptionError, match="backlog.") as e:
        BacklogOptions.parse(options, NORMAL)
    assert fragment in str(e.value)
