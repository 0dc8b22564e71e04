"""``multiLine=true`` (jsonl): one JSON document per file, as Spark's json source reads it.

The expected rows are what Spark 4's ``spark.read.option("multiLine", "true").json(...)`` gave for
the same bytes (checked with the venv's pyspark); the differential harness compares them live.
"""

from __future__ import annotations

import gzip

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from connector_base import InvalidOptionError, MalformedRecordError, ReaderFailedError
from connector_base.spark import to_arrow_schema
from connectors.files import FileSourceOptions
from connectors.files.formats import ReadSchema, line_format
from connectors.files.schema_inference import infer_schema
from connectors.files.split import SplitKind
from unit_tests.connectors.files.helpers_files import make_source, read, read_ranges, whole_files

CORRUPT = StructField("_corrupt_record", StringType())
ID_NAME = StructType([StructField("id", LongType()), StructField("name", StringType())])
WITH_CORRUPT = StructType([*ID_NAME.fields, CORRUPT])


def _read(tmp_path, files: dict[str, bytes], mode: str = "PERMISSIVE", schema=WITH_CORRUPT) -> list[dict]:
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    options = {"path": str(tmp_path), "format": "jsonl", "multiLine": "true", "mode": mode}
    return sorted(read_ranges(options, schema, split_size=4), key=repr)


def test_a_document_is_an_object_or_an_array_of_objects_and_never_cut(tmp_path) -> None:
    rows = _read(
        tmp_path,
        {
            "a.json": b'{\n  "id": 1,\n  "name": "a"\n}\n',
            "b.json": b'\xef\xbb\xbf[\n {"id": 2, "name": "b\xc3\xa9"},\n {"id": 3}\n]',
            "c.json": b"  \n",
            "d.json": b"",
            "e.json": b"[]",
            "f.json.gz": gzip.compress(b'{"id": 4,\n "name": 1e2}', mtime=0),
        },
    )
    assert rows == sorted(
        [
            {"id": 1, "name": "a", "_corrupt_record": None},
            {"id": 2, "name": "bé", "_corrupt_record": None},
            {"id": 3, "name": None, "_corrupt_record": None},
            {"id": 4, "name": "1e2", "_corrupt_record": None},
        ],
        key=repr,
    )
    source = make_source({"path": str(tmp_path), "format": "jsonl", "multiLine": "true"}, ID_NAME)
    assert {s.kind for s in whole_files(source)} == {SplitKind.GZIP}  # whole files, never byte ranges


def test_what_follows_the_document_is_ignored_as_by_spark(tmp_path) -> None:
    rows = _read(tmp_path, {"a.json": b'{"id": 6}\n{"id": 7}\n', "b.json": b'{"id": 11} garbage\xff'})
    assert rows == [
        {"id": 11, "name": None, "_corrupt_record": None},
        {"id": 6, "name": None, "_corrupt_record": None},
    ]


MALFORMED = {
    "trunc.json": b'{"id": 4, "name": ',
    "scalars.json": b"[1, 2]",
    "null.json": b"null",
    "bad8.json": b'{"id": 10, "name": "\xff"}',
    "mixed.json": b'[{"id": 14, "name": "a"}, {"id": "bad", "name": "b"}]',
    "bom.json": b"\xef\xbb\xbf",  # a mark alone is malformed, a mark and blanks is blank (as Spark)
}


def test_permissive_keeps_the_whole_file_in_the_corrupt_column(tmp_path) -> None:
    rows = _read(tmp_path, MALFORMED)
    mixed = '[{"id": 14, "name": "a"}, {"id": "bad", "name": "b"}]'
    assert rows == sorted(
        [
            {"id": None, "name": None, "_corrupt_record": '{"id": 4, "name": '},
            {"id": None, "name": None, "_corrupt_record": "[1, 2]"},
            {"id": None, "name": None, "_corrupt_record": "null"},
            {"id": None, "name": None, "_corrupt_record": '{"id": 10, "name": "\ufffd"}'},
            {"id": 14, "name": "a", "_corrupt_record": mixed},  # one partial row per object
            {"id": None, "name": "b", "_corrupt_record": mixed},
            {"id": None, "name": None, "_corrupt_record": "\ufeff"},
        ],
        key=repr,
    )


def test_dropmalformed_drops_the_file_and_failfast_names_it(tmp_path) -> None:
    assert _read(tmp_path, {**MALFORMED, "ok.json": b'{"id": 1}'}, "DROPMALFORMED") == [
        {"id": 1, "name": None, "_corrupt_record": None}
    ]
    for name in MALFORMED:
        sub = tmp_path / name.split(".")[0]
        sub.mkdir()
        with pytest.raises((MalformedRecordError, ReaderFailedError), match=name):
            _read(sub, {name: MALFORMED[name]}, "FAILFAST")


def test_inference_over_documents(tmp_path) -> None:
    (tmp_path / "a.json").write_bytes(b'[\n {"b": 1.5, "a": {"x": 1}},\n {"b": 2}\n] trailing')
    (tmp_path / "b.json").write_bytes(b'{"c": true}')
    (tmp_path / "n.json").write_bytes(b"null")  # adds nothing, as in Spark's inference
    options = {"path": str(tmp_path), "format": "jsonl", "multiLine": "true", "mode": "PERMISSIVE"}
    schema = infer_schema(FileSourceOptions.parse(options))
    assert schema.simpleString() == "struct<a:struct<x:bigint>,b:double,c:boolean>"
    (tmp_path / "s.json").write_bytes(b"[1, 2]")
    schema = infer_schema(FileSourceOptions.parse(options))
    assert schema.fieldNames() == ["_corrupt_record", "a", "b", "c"]
    assert infer_schema(FileSourceOptions.parse({**options, "mode": "DROPMALFORMED"})).fieldNames() == [
        "a",
        "b",
        "c",
    ]
    with pytest.raises(MalformedRecordError, match="s.json"):
        infer_schema(FileSourceOptions.parse({**options, "mode": "FAILFAST"}))


def test_multiline_reads_csv_files_whole_and_has_no_effect_on_text() -> None:
    assert FileSourceOptions.parse({"path": "/x", "format": "csv", "multiLine": "true"}).whole_files
    with pytest.raises(InvalidOptionError, match="true or false"):
        FileSourceOptions.parse({"path": "/x", "format": "jsonl", "multiLine": "yes"})
    assert not FileSourceOptions.parse({"path": "/x", "format": "text", "multiLine": "true"}).whole_files
    assert not FileSourceOptions.parse({"path": "/x", "format": "csv", "multiLine": "false"}).whole_files


@pytest.mark.parametrize(
    ("data", "corrupt"),
    [
        (b"null\n", ["null"]),
        (b'{"id": 1}\nnull\n', ["null"]),
        (b'null\n{"id": 1}\n', ["null"]),
        (b" null\n[null]\n", [" null", "[null]"]),
    ],
)
def test_a_null_line_is_malformed_and_never_reaches_pyarrow(data, corrupt) -> None:
    # pyarrow 26's JSON reader crashes the process on a block starting with a null line, and reads
    # one elsewhere as a row of nulls; Spark's line mode holds it malformed
    options = FileSourceOptions.parse({"path": "/x", "format": "jsonl", "mode": "PERMISSIVE"})
    fmt = line_format(options, ReadSchema.of(to_arrow_schema(WITH_CORRUPT), options))
    rows = fmt.parse(data, 0, "/x/a.jsonl", at_file_start=True).to_pylist()
    assert [r["_corrupt_record"] for r in rows if r["_corrupt_record"] is not None] == corrupt
    assert [r["id"] for r in rows if r["_corrupt_record"] is None] == ([1] if b'"id"' in data else [])


@pytest.mark.parametrize(
    ("multiline", "data", "rows"),
    [
        ("false", b"{}\n{}\r\n{}", 3),
        ("false", b'\xef\xbb\xbf{"a": 1}\n[{}, {}]\n', 3),
        ("true", b"\xef\xbb\xbf{}", 1),
        ("true", b'[{}, {"a": 1}]', 2),
        ("true", gzip.compress(b"{}", mtime=0), 1),
    ],
)
def test_a_record_is_a_row_when_the_schema_has_no_data_column(tmp_path, multiline, data, rows) -> None:
    """Spark reads ``{}`` with an inferred schema of no columns (or only partition columns) as one
    row each; a table of no columns must keep its row count (Arrow's concat and cast drop it)."""
    name = "a.json.gz" if data.startswith(b"\x1f\x8b") else "a.json"
    (tmp_path / name).write_bytes(data)
    source = make_source(
        {"path": str(tmp_path), "format": "jsonl", "multiLine": multiline, "splitSizeBytes": "4"},
        StructType([]),
    )
    assert read(source, whole_files(source)).num_rows == rows
