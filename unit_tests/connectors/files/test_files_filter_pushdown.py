"""Partition directories and the row-group / partition tests of files-unified's filter pushdown."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connector_base import ConnectorError
from connector_base.spark.filters import ColumnFilter, FilterSupport
from connectors.files.datasource import FilesDataSource
from connectors.files.filter_pushdown import files_filter_support, may_match
from connectors.files.partitions import partition_fields, partition_names, partition_values
from unit_tests.connectors.files.helpers_files import read, whole_files

UTC = dt.UTC


def f(op: str, *values: object) -> ColumnFilter:
    return ColumnFilter("c", op, values)


def test_support() -> None:
    assert files_filter_support(f("in", 1, 2)) is FilterSupport.NARROWS
    assert files_filter_support(f("is_null")) is FilterSupport.NARROWS
    assert files_filter_support(ColumnFilter("a.b", "=", (1,))) is FilterSupport.NONE


def test_may_match_by_min_max_and_nulls() -> None:
    assert may_match(f("=", 5), 1, 9, 0, 10) and not may_match(f("=", 10), 1, 9, 0, 10)
    assert may_match(f("in", 0, 9), 1, 9, 0, 10) and not may_match(f("in", 0, 10), 1, 9, 0, 10)
    assert not may_match(f(">", 9), 1, 9, 0, 10) and may_match(f(">=", 9), 1, 9, 0, 10)
    assert not may_match(f("<", 1), 1, 9, 0, 10) and may_match(f("<=", 1), 1, 9, 0, 10)
    assert not may_match(f("is_null"), 1, 9, 0, 10) and may_match(f("is_null"), None, None, None, 10)
    assert not may_match(f("is_not_null"), None, None, 10, 10) and may_match(f("is_not_null"), 1, 1, 9, 10)
    assert not may_match(f("=", 5), None, None, 10, 10)  # only nulls
    assert may_match(f("=", 5), None, None, 0, 10)  # no statistics
    # kinds: strings, dates, aware timestamps, decimals; mixed kinds keep the row group
    assert not may_match(f("=", "b"), "c", "d", 0, 1) and may_match(f("=", "c1"), "c", "d", 0, 1)
    assert not may_match(f("<", dt.date(2024, 1, 1)), dt.date(2024, 1, 1), dt.date(2024, 2, 1), 0, 1)
    t = dt.datetime(2024, 1, 1, tzinfo=UTC)
    assert not may_match(f(">", t), t, t, 0, 1)
    assert may_match(f(">", t), t.replace(tzinfo=None), t.replace(tzinfo=None), 0, 1)  # naive: unknown zone
    assert may_match(f("=", "5"), 1, 9, 0, 1) and may_match(f("=", dt.date(2024, 1, 1)), t, t, 0, 1)
    assert not may_match(f("=", decimal.Decimal("1.5")), decimal.Decimal("2"), decimal.Decimal("3"), 0, 1)
    # floats: NaN is above every number in Spark and left out of Parquet statistics
    assert may_match(f(">", 9.0), 1.0, 9.0, 0, 10) and not may_match(f("<", 1.0), 1.0, 9.0, 0, 10)
    assert may_match(f("=", float("nan")), 1.0, 9.0, 0, 10)


def test_partition_directories(tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    assert partition_values(str(root), str(root / "a=1" / "b=x%2Fy" / "f.parquet")) == (
        ("a", "1"),
        ("b", "x/y"),
    )
    assert partition_values(str(root), str(root / "a=__HIVE_DEFAULT_PARTITION__" / "f")) == (("a", None),)
    assert partition_values(str(root), str(root / "plain" / "f")) == ()
    assert partition_values(str(root), str(root / "f")) == ()
    files = [str(root / f"a={a}" / f"b={b}" / "f") for a, b in [(1, "x"), (3_000_000_000, "y"), (None, "z")]]
    files[2] = files[2].replace("a=None", "a=__HIVE_DEFAULT_PARTITION__")
    (root / "a=1" / "b=x").mkdir(parents=True)
    (root / "a=1" / "b=x" / "f").write_text("")
    fields = partition_fields(str(root), files)
    assert [(x.name, x.dataType.simpleString()) for x in fields] == [("a", "bigint"), ("b", "string")]
    assert partition_names(str(root)) == ("a", "b")
    with pytest.raises(ConnectorError, match="conflicting partition directories"):
        partition_fields(str(root), [*files, str(root / "a=1" / "f")])


def test_partition_columns_are_read_from_the_path(tmp_path: Path) -> None:
    root = tmp_path / "t"
    for day in (1, 2):
        d = root / f"day={day}" / "kind=a b"
        d.mkdir(parents=True)
        pq.write_table(pa.table({"id": [day * 10, day * 10 + 1]}), d / "p.parquet")
    ds = FilesDataSource({"path": str(root), "format": "parquet", "recursive": "true"})
    schema = ds.schema()
    assert schema.simpleString() == "struct<id:bigint,day:int,kind:string>"
    source = ds.create_source(schema, streaming=False)
    rows = sorted(read(source, whole_files(source)).to_pylist(), key=lambda r: r["id"])
    assert rows == [
        {"id": 10, "day": 1, "kind": "a b"},
        {"id": 11, "day": 1, "kind": "a b"},
        {"id": 20, "day": 2, "kind": "a b"},
        {"id": 21, "day": 2, "kind": "a b"},
    ]
    # without recursive=true the partition directories are not read, and no column is added
    flat = FilesDataSource({"path": str(root / "day=1" / "kind=a b"), "format": "parquet"})
    assert flat.schema().simpleString() == "struct<id:bigint>"


def test_partition_columns_of_a_row_format_and_file_pruning(tmp_path: Path) -> None:
    root = tmp_path / "t"
    for day in (1, 2, 3):
        d = root / f"day={day}"
        d.mkdir(parents=True)
        (d / "p.csv").write_text(f"id,name\n{day}0,a\n{day}1,b\n")
    ds = FilesDataSource({"path": str(root), "format": "csv", "header": "true", "recursive": "true"})
    schema = ds.schema()
    assert schema.simpleString() == "struct<id:string,name:string,day:int>"
    source = ds.create_source(schema, streaming=False)
    rows = sorted((r["id"], r["name"], r["day"]) for r in read(source, whole_files(source)).to_pylist())
    assert rows == [
        ("10", "a", 1),
        ("11", "b", 1),
        ("20", "a", 2),
        ("21", "b", 2),
        ("30", "a", 3),
        ("31", "b", 3),
    ]
    planner = ds.create_planner(source)
    planner.push_filters([ColumnFilter("day", "in", (1, 3)), ColumnFilter("day", ">", (1,))])
    splits = {s.split_id: (s, s.start_position) for s in whole_files(source)}
    ends = planner.end_positions(splits)
    read_paths = [s.path for sid, (s, pos) in splits.items() if ends[sid] != pos]
    assert [Path(p).parent.name for p in read_paths] == ["day=3"]
