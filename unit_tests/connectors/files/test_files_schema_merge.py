"""Parquet ``mergeSchema``: each expectation is what Spark 4 inferred from the same files (checked
with the venv's pyspark, local[1])."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from connector_base import ConnectorError, InvalidOptionError
from connectors.files import FileSourceOptions
from connectors.files.schema_inference import infer_schema
from unit_tests.connectors.files.helpers_files import make_source, read, whole_files

BASE = pa.table({"id": pa.array([1], pa.int64()), "name": ["a"]})
ADDED = pa.table({"id": pa.array([2], pa.int64()), "name": ["b"], "extra": [0.5]})
OTHER_ORDER = pa.table({"name": ["d"], "zz": [1], "id": pa.array([4], pa.int64())})


def _write(tmp_path, tables: list[tuple[str, pa.Table | bytes]]) -> None:
    """Files written with modification times in list order (the oldest first)."""
    for i, (name, table) in enumerate(tables):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(table, bytes):
            path.write_bytes(table)
        else:
            pq.write_table(table, path)
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))


def _schema(tmp_path, **options: str) -> str:
    opts = {"path": str(tmp_path), "format": "parquet", **options}
    return infer_schema(FileSourceOptions.parse(opts)).simpleString()


def test_merged_in_path_order_new_columns_last(tmp_path) -> None:
    # part-2 is the oldest, part-0 the newest: Spark takes them by path
    _write(tmp_path, [("part-2.parquet", OTHER_ORDER), ("part-1.parquet", BASE), ("part-0.parquet", ADDED)])
    assert _schema(tmp_path, mergeSchema="true") == "struct<id:bigint,name:string,extra:double,zz:bigint>"
    assert _schema(tmp_path) == "struct<id:bigint,name:string,extra:double>"  # the first file by path
    assert _schema(tmp_path, mergeSchema="FALSE") == "struct<id:bigint,name:string,extra:double>"
    opts = {"path": str(tmp_path), "format": "parquet", "mergeSchema": "true"}
    source = make_source(opts, infer_schema(FileSourceOptions.parse(opts)))
    rows = sorted(read(source, whole_files(source)).to_pylist(), key=lambda r: r["id"])
    assert rows == [
        {"id": 1, "name": "a", "extra": None, "zz": None},
        {"id": 2, "name": "b", "extra": 0.5, "zz": None},
        {"id": 4, "name": "d", "extra": None, "zz": 1},
    ]


@pytest.mark.parametrize(
    ("left", "right", "merged"),
    [
        (
            pa.table({"s": pa.array([{"a": 1}])}),
            pa.table({"s": pa.array([{"b": "x"}])}),
            "s:struct<a:bigint,b:string>",
        ),
        (pa.table({"Id": [1]}), pa.table({"id": [2]}), "Id:bigint"),  # names without case
        (pa.table({"v": pa.array([1], pa.int64())}), pa.table({"v": pa.array([1], pa.int32())}), None),
        (pa.table({"v": pa.array([1.5], pa.float32())}), pa.table({"v": [2.5]}), None),
        (
            pa.table({"v": pa.array([1], pa.decimal128(10, 2))}),
            pa.table({"v": pa.array([1], pa.decimal128(12, 3))}),
            None,
        ),
        (pa.table({"v": [1]}), pa.table({"v": ["x"]}), None),
    ],
)
def test_types_merge_only_when_spark_merges_them(tmp_path, left, right, merged) -> None:
    _write(tmp_path, [("part-0.parquet", left), ("part-1.parquet", right)])
    if merged is None:
        with pytest.raises(ConnectorError, match="does not merge"):
            _schema(tmp_path, mergeSchema="true")
    else:
        assert _schema(tmp_path, mergeSchema="true") == f"struct<{merged}>"


def test_corrupt_and_empty_files_with_merge_schema(tmp_path) -> None:
    _write(
        tmp_path, [("part-0.parquet", BASE), ("part-1.parquet", ADDED), ("part-2.parquet", b"not parquet")]
    )
    with pytest.raises(ConnectorError):
        _schema(tmp_path, mergeSchema="true")
    merged = _schema(tmp_path, mergeSchema="true", ignoreCorruptFiles="true")
    assert merged == "struct<id:bigint,name:string,extra:double>"
    (tmp_path / "part-2.parquet").write_bytes(b"")  # an empty file holds no schema, as in Spark
    assert _schema(tmp_path, mergeSchema="true") == "struct<id:bigint,name:string,extra:double>"


def test_partition_columns_follow_the_merged_schema(tmp_path) -> None:
    _write(tmp_path, [("p=1/part-0.parquet", BASE), ("p=2/part-1.parquet", ADDED)])
    merged = _schema(tmp_path, mergeSchema="true", recursive="true")
    assert merged == "struct<id:bigint,name:string,extra:double,p:int>"


def test_merge_schema_values_as_spark_reads_them() -> None:
    with pytest.raises(InvalidOptionError, match="'mergeSchema'"):
        FileSourceOptions.parse({"path": "/x", "format": "parquet", "mergeSchema": "yes"})
    assert not FileSourceOptions.parse({"path": "/x", "format": "jsonl", "mergeSchema": "yes"}).merge_schema
