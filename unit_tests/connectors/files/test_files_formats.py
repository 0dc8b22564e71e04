"""Each format, the malformed-line modes, gzip, metadata columns and files changed after discovery."""

from __future__ import annotations

import datetime as dt
import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from connector_base import ReaderFailedError
from connectors.files import FilePlanner
from unit_tests.connectors.files.helpers_files import make_source, read, read_ranges, whole_files

ID_NAME = StructType([StructField("id", LongType()), StructField("name", StringType())])
CORRUPT = StructField("_corrupt_record", StringType())
META = [StructField("_file", StringType()), StructField("_offset", LongType())]

BAD_JSONL = b'{"id": 1, "name": "a"}\n{"id": 2, "name": \n\n{"id": "three"}\n{"id": 4, "name": "d"}\n'


def test_jsonl_failfast_names_file_and_offset(tmp_path) -> None:
    (tmp_path / "bad.jsonl").write_bytes(BAD_JSONL)
    with pytest.raises(ReaderFailedError) as info:
        read_ranges({"path": str(tmp_path), "format": "jsonl"}, ID_NAME)
    message = str(info.value)
    assert "bad.jsonl" in message and "byte offset 23" in message and "DROPMALFORMED" in message


def test_jsonl_dropmalformed_and_permissive(tmp_path) -> None:
    (tmp_path / "bad.jsonl").write_bytes(BAD_JSONL)
    opts = {"path": str(tmp_path), "format": "jsonl"}
    dropped = read_ranges({**opts, "mode": "DROPMALFORMED"}, ID_NAME)
    assert dropped == [{"id": 1, "name": "a"}, {"id": 4, "name": "d"}]
    schema = StructType(ID_NAME.fields + [CORRUPT])
    kept = read_ranges({**opts, "mode": "PERMISSIVE"}, schema)
    assert kept == [
        {"id": 1, "name": "a", "_corrupt_record": None},
        {"id": None, "name": None, "_corrupt_record": '{"id": 2, "name": '},
        {"id": None, "name": None, "_corrupt_record": '{"id": "three"}'},
        {"id": 4, "name": "d", "_corrupt_record": None},
    ]
    # without the corrupt-record column a malformed line is a row of nulls, as in Spark
    assert read_ranges({**opts, "mode": "PERMISSIVE"}, ID_NAME)[1] == {"id": None, "name": None}


def test_jsonl_types_missing_and_extra_fields(tmp_path) -> None:
    lines = [
        {
            "i": 1,
            "d": 1.5,
            "b": True,
            "day": "2024-02-29",
            "ts": "2024-01-01T10:00:00Z",
            "tags": ["x"],
            "extra": 1,
        },
        {"i": 2},
    ]
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(x) for x in lines))
    schema = StructType(
        [
            StructField("i", IntegerType()),
            StructField("d", DoubleType()),
            StructField("b", BooleanType()),
            StructField("day", DateType()),
            StructField("ts", TimestampType()),
            StructField("tags", ArrayType(StringType())),
        ]
    )
    rows = read_ranges({"path": str(tmp_path), "format": "jsonl"}, schema)
    assert rows[0]["day"] == dt.date(2024, 2, 29) and rows[0]["tags"] == ["x"]
    assert rows[0]["ts"] == dt.datetime(2024, 1, 1, 10, tzinfo=dt.UTC)
    assert rows[1] == {"i": 2, "d": None, "b": None, "day": None, "ts": None, "tags": None}


def test_csv_header_sep_quote_and_nulls(tmp_path) -> None:
    (tmp_path / "a.csv").write_text('id;name\n1;"x;y"\n2;\n3;"say ""hi"""\n')
    opts = {"path": str(tmp_path), "format": "csv", "header": "true", "sep": ";", "escape": '"'}
    for split_size in (None, 5):  # the header is only in the range that holds byte 0
        rows = read_ranges(opts, ID_NAME, split_size)
        assert rows == [{"id": 1, "name": "x;y"}, {"id": 2, "name": None}, {"id": 3, "name": 'say "hi"'}]
    # Spark's default escape is a backslash: doubled quotes then leave the value as written
    rows = read_ranges({**opts, "escape": "\\"}, ID_NAME, None)
    assert rows[2] == {"id": 3, "name": '"say ""hi"""'}


def test_csv_malformed_lines(tmp_path) -> None:
    (tmp_path / "a.csv").write_text("1,a\n2,b,extra\nthree,c\n4,d\n")
    opts = {"path": str(tmp_path), "format": "csv"}
    with pytest.raises(ReaderFailedError, match="byte offset 4"):
        read_ranges(opts, ID_NAME)
    assert [r["id"] for r in read_ranges({**opts, "mode": "DROPMALFORMED"}, ID_NAME)] == [1, 4]
    rows = read_ranges({**opts, "mode": "PERMISSIVE"}, StructType(ID_NAME.fields + [CORRUPT]))
    assert [r["_corrupt_record"] for r in rows] == [None, "2,b,extra", "three,c", None]


def test_text_crlf_empty_lines_and_invalid_utf8(tmp_path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\r\n\r\ntw\xffo\nlast")
    rows = read_ranges(
        {"path": str(tmp_path), "format": "text"}, StructType([StructField("value", StringType())])
    )
    assert [r["value"] for r in rows] == ["one", "", "tw\ufffdo", "last"]


@pytest.mark.parametrize("fmt", ["jsonl", "text"])
def test_gzip_files_are_read_whole(tmp_path, fmt) -> None:
    lines = [json.dumps({"id": i, "name": f"n{i}"}) for i in range(1000)]
    (tmp_path / f"a.{fmt}.gz").write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    schema = ID_NAME if fmt == "jsonl" else StructType([StructField("value", StringType())])
    source = make_source({"path": str(tmp_path), "format": fmt, "splitSizeBytes": "100"}, schema)
    (split,) = whole_files(source)
    assert FilePlanner(source.options).range_splits(split, 0, split.end) == [
        split.with_range(0, split.file_size)
    ]
    assert len(read_ranges({"path": str(tmp_path), "format": fmt}, schema, 100)) == 1000


def _write_parquet(path, n=1000, row_group_size=100):
    pq.write_table(
        pa.table({"id": pa.array(range(n), pa.int64()), "name": [f"n{i}" for i in range(n)]}),
        path,
        row_group_size=row_group_size,
    )


def test_parquet_row_groups_metadata_and_missing_columns(tmp_path) -> None:
    _write_parquet(tmp_path / "a.parquet")
    schema = StructType([StructField("name", StringType()), StructField("missing", LongType()), *META])
    source = make_source(
        {"path": str(tmp_path), "format": "parquet", "includeMetadata": "true", "splitSizeBytes": "1"}, schema
    )
    (split,) = whole_files(source)
    assert split.length == 10  # row groups
    ranges = FilePlanner(source.options).range_splits(split, 3, 7)
    assert [(r.offset, r.end) for r in ranges] == [(3, 4), (4, 5), (5, 6), (6, 7)]
    rows = read(source, ranges).to_pylist()
    assert len(rows) == 400 and rows[0] == {
        "name": "n300",
        "missing": None,
        "_file": split.path,
        "_offset": 300,
    }


@pytest.mark.parametrize("fmt", ["text", "jsonl", "csv"])
def test_metadata_columns_of_row_formats(tmp_path, fmt) -> None:
    body = {
        "text": "a\nbb\nccc\n",
        "jsonl": '{"v":"a"}\n\n{"v":"bb"}\n{"v":"ccc"}\n',
        "csv": "a\n\nbb\nccc\n",
    }[fmt]
    (tmp_path / "f").write_text(body)
    schema = StructType([StructField("value" if fmt == "text" else "v", StringType()), *META])
    rows = read_ranges({"path": str(tmp_path), "format": fmt, "includeMetadata": "true"}, schema)
    starts = [i for i in range(len(body)) if (i == 0 or body[i - 1] == "\n") and body[i] != "\n"]
    assert [r["_offset"] for r in rows] == starts
    assert {r["_file"] for r in rows} == {str(tmp_path / "f")}


def test_file_truncated_after_discovery_is_data_loss(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("a\nb\nc\n")
    source = make_source(
        {"path": str(tmp_path), "format": "text"}, StructType([StructField("value", StringType())])
    )
    (split,) = whole_files(source)
    (tmp_path / "a.txt").write_text("a\n")
    with pytest.raises(ReaderFailedError, match="truncated or replaced"):
        read(source, [split])


def test_bytes_appended_after_discovery_are_not_read(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("a\nb\n")
    source = make_source(
        {"path": str(tmp_path), "format": "text"}, StructType([StructField("value", StringType())])
    )
    (split,) = whole_files(source)
    with open(tmp_path / "a.txt", "a") as f:
        f.write("c\n")
    assert read(source, [split])["value"].to_pylist() == ["a", "b"]
