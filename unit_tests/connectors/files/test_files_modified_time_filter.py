"""``modifiedBefore`` / ``modifiedAfter``: the files Spark 4 kept for the same thresholds and zones.

Files modified at 1700000000 (2023-11-14T22:13:20Z), 1700000001.5 and 1700000002; the expected
sets are what ``spark.read.text`` returned with each option (checked with the venv's pyspark).
"""

from __future__ import annotations

import os

import pytest
from pyspark.sql.types import StringType, StructField, StructType

from connector_base import InvalidOptionError
from connectors.files import FileSourceOptions
from connectors.files.modified_time_filter import ModifiedTimeFilter, parse_timestamp
from unit_tests.connectors.files.helpers_files import read_ranges

TIMES_MS = {"v0": 1_700_000_000_000, "v1": 1_700_000_001_500, "v2": 1_700_000_002_000}


@pytest.mark.parametrize(
    ("before", "after", "zone", "kept"),
    [
        ("2023-11-14T22:13:20", None, "UTC", []),  # strictly before
        ("2023-11-14T22:13:21.5", None, "UTC", ["v0"]),
        ("2023-11-14T22:13:21.501", None, "UTC", ["v0", "v1"]),
        (None, "2023-11-14T22:13:20", "UTC", ["v1", "v2"]),  # strictly after
        (None, "2023-11-14T22:13:21.499999", "UTC", ["v1", "v2"]),
        (None, "2023-11-14 22:13:21", "UTC", ["v1", "v2"]),
        (None, "2023-11-14", "UTC", ["v0", "v1", "v2"]),
        (None, "2023", "UTC", ["v0", "v1", "v2"]),
        (None, "2023-11-14T22", "UTC", ["v0", "v1", "v2"]),
        (None, "2023-11-14T22:13:21Z", "UTC", ["v1", "v2"]),
        (None, "2023-11-14T23:13:21+01:00", "UTC", ["v1", "v2"]),
        (None, " 2023-11-14T22:13:21 ", "UTC", ["v1", "v2"]),
        ("2023-11-14T22:13:22", "2023-11-14T22:13:20", "UTC", ["v1"]),
        ("2023-11-14T22:13:20", "2023-11-14T22:13:22", "UTC", []),
        # elsewhere than UTC Spark shifts the file's time into the zone too (its offset counts twice)
        (None, "2023-11-14T23:13:21", "+01:00", ["v0", "v1", "v2"]),
        (None, "2023-11-14T17:13:21", "America/New_York", []),
    ],
)
def test_files_kept_as_spark_kept_them(before, after, zone, kept) -> None:
    f = ModifiedTimeFilter(before, after)
    assert [name for name, ms in TIMES_MS.items() if f.accepts(ms, zone)] == kept


@pytest.mark.parametrize(
    "text", ["yesterday", "", "2023-13-01", "2023-11-14T22:13:21 Mars/Olympus", "2023-11-14Z", "2023-11-14T"]
)
def test_an_invalid_timestamp_is_refused_naming_the_option(text) -> None:
    with pytest.raises(InvalidOptionError, match="modifiedAfter.*2024-06-01T13:00:00"):
        FileSourceOptions.parse({"path": "/x", "format": "text", "modifiedAfter": text})
    with pytest.raises(ValueError):
        parse_timestamp(text, "UTC")


def test_the_read_skips_the_files_the_options_leave_out(tmp_path) -> None:
    for i, (name, ms) in enumerate(TIMES_MS.items()):
        path = tmp_path / f"f{i}.txt"
        path.write_text(name + "\n")
        os.utime(path, ns=(ms * 1_000_000, ms * 1_000_000))
    schema = StructType([StructField("value", StringType())])
    options = {"path": str(tmp_path), "format": "text", "timeZone": "UTC"}
    rows = read_ranges({**options, "modifiedAfter": "2023-11-14T22:13:20"}, schema)
    assert sorted(r["value"] for r in rows) == ["v1", "v2"]
    rows = read_ranges({**options, "modifiedBefore": "2023-11-14T22:13:21.5"}, schema)
    assert [r["value"] for r in rows] == ["v0"]


def test_a_corrupt_parquet_file_the_filter_leaves_out_is_never_read(tmp_path) -> None:
    """Spark (checked, a user schema, modifiedBefore before every file) reads no rows; the footer of
    a truncated file is read only by a task that keeps the file, and then fails naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.types import LongType

    from connector_base import ConnectorError, ReaderFailedError
    from unit_tests.connectors.files.helpers_files import make_source, read, whole_files

    pq.write_table(pa.table({"id": [1]}), tmp_path / "part-1.parquet")
    good = (tmp_path / "part-1.parquet").read_bytes()
    (tmp_path / "part-0.parquet").write_bytes(good[: len(good) // 2])
    for name in ("part-0.parquet", "part-1.parquet"):
        os.utime(tmp_path / name, (1_700_000_000, 1_700_000_000))
    schema = StructType([StructField("id", LongType())])
    base = {"path": str(tmp_path), "format": "parquet", "timeZone": "UTC"}
    source = make_source({**base, "modifiedBefore": "2023-11-14"}, schema)
    assert read(source, whole_files(source)).num_rows == 0
    source = make_source({**base, "modifiedBefore": "2030-01-01"}, schema)
    with pytest.raises((ConnectorError, ReaderFailedError), match="part-0.parquet"):
        read(source, whole_files(source))
