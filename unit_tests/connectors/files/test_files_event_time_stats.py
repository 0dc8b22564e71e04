"""``ParquetEventTimes``: cut positions from row-group statistics, without Spark."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connector_base.errors import ConnectorError
from connectors.files.event_time import ParquetEventTimes
from connectors.files.split import FileSourceSplit, SplitKind


def _split(path: Path, groups: int) -> FileSourceSplit:
    return FileSourceSplit(str(path), 0, groups, path.stat().st_size, 0, SplitKind.ROW_GROUPS)


def _file(tmp_path: Path, column: pa.Array) -> FileSourceSplit:
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"ts": column}), path, row_group_size=2)
    return _split(path, pq.ParquetFile(path).metadata.num_row_groups)


def test_positions_are_the_first_row_group_whose_max_reaches_the_time(tmp_path: Path) -> None:
    split = _file(tmp_path, pa.array([10, 20, 30, 40, 50, 60], pa.int64()))  # groups [10,20] [30,40] [50,60]
    times = ParquetEventTimes("ts")
    ranges = {"s": (split, 0, 3)}
    assert times.positions_at_time(ranges, 20) == {"s": 0}
    assert times.positions_at_time(ranges, 21) == {"s": 1}
    assert times.positions_at_time(ranges, 41) == {"s": 2}
    assert times.positions_at_time(ranges, 61) == {"s": 3}
    assert times.positions_at_time({"s": (split, 2, 3)}, 15) == {"s": 2}  # never before the start
    assert times.times_at({"s": (split, 1), "e": (split, 3)}) == {"s": 40, "e": None}
    assert times.head_times({"s": (split, 3), "t": (split, 1)}) == {"s": 60, "t": 20}


def test_an_unsorted_file_only_delays_rows(tmp_path: Path) -> None:
    split = _file(tmp_path, pa.array([50, 10, 20, 30], pa.int64()))  # groups [10,50] [20,30]
    times = ParquetEventTimes("ts")
    # the first group holds a row at 50: nothing is read before the cut passes it, so 10..30 wait
    assert times.positions_at_time({"s": (split, 0, 2)}, 31) == {"s": 0}
    assert times.positions_at_time({"s": (split, 0, 2)}, 51) == {"s": 2}


def test_timestamps_are_epoch_milliseconds(tmp_path: Path) -> None:
    ts = [datetime(1970, 1, 1, 0, 0, 1), datetime(1970, 1, 1, 0, 0, 2, 500)]
    split = _file(tmp_path, pa.array(ts, pa.timestamp("us")))
    assert ParquetEventTimes("ts").row_groups(split) == [(1_000, 2_000)]


def test_a_missing_or_wrong_column_names_the_option(tmp_path: Path) -> None:
    split = _file(tmp_path, pa.array(["a", "b"]))
    with pytest.raises(ConnectorError, match="eventTime.column='ts'.*timestamp"):
        ParquetEventTimes("ts").row_groups(split)
    with pytest.raises(ConnectorError, match="eventTime.column='other'.*no such column"):
        ParquetEventTimes("other").row_groups(split)
