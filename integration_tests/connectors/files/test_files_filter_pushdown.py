"""Filter pushdown (``filterPushdown=true``) on files-unified batch reads: hive partition
directories drop whole files, Parquet row-group statistics drop row groups, and the rows are the
same as without pushdown.

What is read is counted twice: the rows the Python scan yielded to Spark (``numOutputRows`` of the
data source scan, before Spark's own filter; each row group here holds 50 rows), and the files and
row groups the driver planned (the exact ranges executors read).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.datasource import (
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
)

from connectors.files.datasource import FilesDataSource
from connectors.files.split import FileSourceSplit

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

CONF = "spark.sql.python.filterPushdown.enabled"
FMT = "files-unified"
PER_FILE = 200
GROUP = 50
LAYOUT = [("eu", 1), ("eu", 2), ("us", 1), ("us", 2)]
"""(region, day) of each file, in id order: file k holds ids [200k, 200k + 200)."""


@pytest.fixture
def pushdown_conf(spark: Any) -> Iterator[Any]:
    before = spark.conf.get(CONF, "false")
    spark.conf.set(CONF, "true")
    yield spark
    spark.conf.set(CONF, before)


@pytest.fixture
def hive_dir(tmp_path: Path) -> Path:
    """4 Parquet files under region=/day= directories, 4 row groups of 50 rows each; ``note`` is null
    in the second row group of every file only."""
    root = tmp_path / "table"
    for k, (region, day) in enumerate(LAYOUT):
        ids = list(range(k * PER_FILE, (k + 1) * PER_FILE))
        notes = [None if GROUP <= i - k * PER_FILE < 2 * GROUP else f"n{i}" for i in ids]
        d = root / f"region={region}" / f"day={day}"
        d.mkdir(parents=True)
        table = pa.table({"id": pa.array(ids, pa.int64()), "note": pa.array(notes, pa.string())})
        pq.write_table(table, d / "part-0.parquet", row_group_size=GROUP)
    return root


def scanned_rows(df: Any) -> int:
    """``numOutputRows`` of the Python data source scan of an executed ``df``."""
    found = []

    def walk(node: Any) -> None:
        if "Python" in node.nodeName() or "BatchScan" in node.nodeName():
            metrics = node.metrics()
            if metrics.contains("numOutputRows"):
                found.append(int(metrics.apply("numOutputRows").value()))
        for children in (node.children(), node.innerChildren()):
            for i in range(children.size()):
                walk(children.apply(i))

    walk(df._jdf.queryExecution().executedPlan())
    assert found, "no scan metrics"
    return found[0]


def planned(path: Path, filters: list[Any]) -> tuple[int, int]:
    """``(files, row groups)`` the driver plans for a pushed-down read."""
    ds = FilesDataSource(
        {"path": str(path), "format": "parquet", "recursive": "true", "filterPushdown": "true"}
    )
    schema = ds.schema()
    r = ds.reader(schema)
    r.pushFilters(filters)
    serializer = ds.create_source(schema, False).split_serializer
    splits: list[FileSourceSplit] = [serializer.loads(s) for p in r.partitions() for s in p.splits]
    return len({s.path for s in splits}), sum(s.length for s in splits)


def read(spark: Any, path: Path, where: str, pushdown: bool) -> tuple[list[tuple[Any, ...]], int]:
    reader = spark.read.format(FMT).option("format", "parquet").option("recursive", "true")
    if pushdown:
        reader = reader.option("filterPushdown", "true")
    df = reader.load(str(path)).where(where)
    rows = sorted(tuple(r) for r in df.collect())
    return rows, scanned_rows(df)


def test_partitions_and_row_group_statistics_skip_reading(pushdown_conf: Any, hive_dir: Path) -> None:
    spark = pushdown_conf
    df = spark.read.format(FMT).option("format", "parquet").option("recursive", "true").load(str(hive_dir))
    assert df.columns == ["id", "note", "region", "day"]
    assert dict(df.dtypes)["day"] == "int"
    cases = [
        # region drops the us files; id drops 2 row groups of eu/day=1 and all of eu/day=2
        ("region = 'eu' AND id >= 130 AND id < 170", 40, 2 * GROUP),
        # day drops the day=1 files; IS NULL drops the row groups whose null count is 0
        ("day = 2 AND note IS NULL", 2 * GROUP, 2 * GROUP),
        # only row-group statistics: IN and IS NOT NULL (the rest is planned below)
        ("id IN (5, 777) AND note IS NOT NULL", 2, 2 * GROUP),
    ]
    for where, matches, read_with in cases:
        expected, read_without = read(spark, hive_dir, where, pushdown=False)
        got, read_pushed = read(spark, hive_dir, where, pushdown=True)
        assert got == expected, where
        assert len(expected) == matches, where
        assert read_without == 4 * PER_FILE, where
        assert read_pushed == read_with, where
        print(f"{where}: {read_pushed} rows scanned with pushdown, {read_without} without")


def test_driver_plans_fewer_files_and_row_groups(hive_dir: Path) -> None:
    assert planned(hive_dir, []) == (4, 16)
    assert planned(hive_dir, [EqualTo(("region",), "us")]) == (2, 8)
    assert planned(hive_dir, [In(("day",), (1,)), GreaterThanOrEqual(("id",), 420)]) == (1, 4)
    assert planned(hive_dir, [EqualTo(("region",), "xx")]) == (0, 0)
    assert planned(hive_dir, [IsNull(("note",)), LessThan(("id",), 200)]) == (1, 1)
    assert planned(hive_dir, [IsNotNull(("note",)), LessThanOrEqual(("id",), 60)]) == (1, 1)
    assert planned(hive_dir, [GreaterThan(("id",), 799)]) == (0, 0)
