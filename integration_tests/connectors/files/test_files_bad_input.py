"""Bad input on files-unified (issue 17 §3): corrupt-record column in every mode, restarts with
another path or new files, missing paths; each compared with Spark's own file sources."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from integration_tests.connectors.files.conftest import write_jsonl
from integration_tests.connectors.parquet_sink import run_available_now

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

FMT = "files-unified"
CSV_SCHEMA = "id INT, name STRING, _corrupt_record STRING"
GOOD_AND_BAD = "1,a\n2,b\nthree,c\n4,d\n"


def _csv(spark: Any, path: Path, mode: str) -> Any:
    return (
        spark.read.format(FMT).option("format", "csv").option("mode", mode).schema(CSV_SCHEMA).load(str(path))
    )


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def test_csv_dropmalformed_with_a_corrupt_record_column_matches_spark(spark: Any, data_dir: Path) -> None:
    (data_dir / "a.csv").write_text(GOOD_AND_BAD)
    ours = _rows(_csv(spark, data_dir, "DROPMALFORMED"))
    spark_csv = _rows(spark.read.schema(CSV_SCHEMA).option("mode", "DROPMALFORMED").csv(str(data_dir)))
    assert ours == [(1, "a", None), (2, "b", None), (4, "d", None)]
    assert ours == spark_csv


def test_csv_permissive_keeps_the_bad_line_in_the_corrupt_record_column(spark: Any, data_dir: Path) -> None:
    (data_dir / "a.csv").write_text(GOOD_AND_BAD)
    ours = _rows(_csv(spark, data_dir, "PERMISSIVE"))
    # the field that parses is kept, as Spark keeps it (found by the differential harness, issue 22)
    assert (None, "c", "three,c") in ours and (1, "a", None) in ours and len(ours) == 4
    assert ours == _rows(spark.read.schema(CSV_SCHEMA).option("mode", "PERMISSIVE").csv(str(data_dir)))


def test_csv_failfast_with_a_corrupt_record_column_blames_the_bad_line(spark: Any, data_dir: Path) -> None:
    (data_dir / "a.csv").write_text(GOOD_AND_BAD)
    # match=: any other failure (Spark's worker start limit on a loaded machine) surfaces whole
    with pytest.raises(Exception, match="(?s)at byte offset 8.*three,c") as info:
        _csv(spark, data_dir, "FAILFAST").collect()
    message = str(info.value)
    assert "'1,a" not in message and "'2,b" not in message


def _available_now(spark: Any, directory: Path, checkpoint: Path, table: str, **options: str) -> None:
    opts = {"format": "jsonl", **options}
    df = spark.readStream.format(FMT).options(**opts).schema("id LONG").load(str(directory))
    run_available_now(df, checkpoint.parent / table, checkpoint)


def test_restarted_available_now_query_reads_files_added_since(
    spark: Any, data_dir: Path, tmp_path: Path
) -> None:
    checkpoint = tmp_path / "chk"
    write_jsonl(data_dir, "a.jsonl", [{"id": 1}, {"id": 2}])
    _available_now(spark, data_dir, checkpoint, "out")
    write_jsonl(data_dir, "b.jsonl", [{"id": 3}])
    _available_now(spark, data_dir, checkpoint, "out")
    assert sorted(r.id for r in spark.read.parquet(str(tmp_path / "out")).collect()) == [1, 2, 3]


def test_restart_with_another_path_fails_naming_the_change(spark: Any, tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_jsonl(first, "a.jsonl", [{"id": 1}])
    write_jsonl(second, "b.jsonl", [{"id": 2}])
    checkpoint = tmp_path / "chk"
    _available_now(spark, first, checkpoint, "out")
    with pytest.raises(
        Exception,
        match=rf"(?s)checkpoint was written for another source.*{re.escape(str(first / 'a.jsonl'))}"
        rf".*{re.escape(f'path={second}')}",
    ):
        _available_now(spark, second, checkpoint, "out")


def test_missing_path_fails_like_spark_and_a_glob_matching_nothing_too(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="PATH_NOT_FOUND"):
        spark.read.json(str(tmp_path / "nope" / "*.jsonl")).collect()
    for path in (tmp_path / "nope", tmp_path / "nope" / "*.jsonl"):
        with pytest.raises(Exception, match="for option 'path'"):
            spark.read.format(FMT).option("format", "jsonl").schema("id LONG").load(str(path)).collect()
