"""``lineSep`` and ``encoding`` / ``charset``: each expectation is what Spark 4 read from the same bytes
(checked with the venv's pyspark, local[1], ``spark.read.format(...).options(...)``)."""

from __future__ import annotations

import gzip

import pytest
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from connector_base import InvalidOptionError
from connectors.files import FileSourceOptions
from connectors.files.formats.line_framing import LineFraming
from connectors.files.schema_inference import infer_schema
from unit_tests.connectors.files.helpers_files import make_source, read, whole_files

TEXT = StructType([StructField("value", StringType())])
JSON = StructType([StructField("a", IntegerType()), StructField("_corrupt_record", StringType())])
CSV = StructType(
    [
        StructField("id", IntegerType()),
        StructField("name", StringType()),
        StructField("_corrupt_record", StringType()),
    ]
)


def _rows(tmp_path, fmt: str, data: bytes, options: dict[str, str], schema: StructType, name: str = "part-0"):
    (tmp_path / name).write_bytes(data)
    source = make_source({"path": str(tmp_path), "format": fmt, **options}, schema)
    return [tuple(r.values()) for r in read(source, whole_files(source)).to_pylist()]


@pytest.mark.parametrize(
    ("data", "options", "expected"),
    [
        (b"a;b\nc;;d;", {"lineSep": ";"}, ["a", "b\nc", "", "d"]),
        (b"xabyabab\r\nz", {"lineSep": "ab"}, ["x", "y", "", "\r\nz"]),
        (b"a\r\nb\rc\n", {"lineSep": "\n"}, ["a\r", "b\rc"]),
        (b"a\r\nb", {"lineSep": "\r\n"}, ["a", "b"]),
        (b"\xef\xbb\xbfa;b", {"lineSep": ";"}, ["a", "b"]),  # the mark is skipped as without lineSep
        ("a;b".encode("utf-16le"), {"encoding": "UTF-16LE", "lineSep": ";"}, ["a\0", "b\0"]),  # raw bytes
        (b"a\nb", {"encoding": "bogus"}, ["a", "b"]),  # without lineSep, text ignores encoding
        (b"a;b", {"charset": "bogus", "lineSep": ";"}, ["a", "b"]),  # and always ignores charset
        (b"a;b", {"encoding": "UTF-32", "lineSep": ";"}, ["a;b"]),  # 00 00 00 3B is not in the file
    ],
)
def test_text_lines_end_at_line_sep_in_its_encoding(tmp_path, data, options, expected) -> None:
    assert [r[0] for r in _rows(tmp_path, "text", data, options, TEXT)] == expected


def test_json_lines_end_at_line_sep_and_hold_line_breaks_as_whitespace(tmp_path) -> None:
    data = b'{"a":1}|{"a":2}\n|{"a":\n3}||  |{"a":"x\ny"}|[{"a":4},{"a":5}]'
    rows = _rows(tmp_path, "jsonl", data, {"lineSep": "|", "mode": "PERMISSIVE"}, JSON)
    assert rows == [(1, None), (2, None), (3, None), (None, '{"a":"x\ny"}'), (4, None), (5, None)]
    (tmp_path / "part-0").write_bytes(b'{"a":1};{"b":\n"x"};')
    opts = FileSourceOptions.parse({"path": str(tmp_path), "format": "jsonl", "lineSep": ";"})
    assert infer_schema(opts).simpleString() == "struct<a:bigint,b:string>"


def test_json_in_another_charset_keeps_a_malformed_lines_bytes_in_the_corrupt_column(tmp_path) -> None:
    data = '{"a":1}\n{"a":"x"}\n'.encode("utf-16le")
    options = {"encoding": "UTF-16LE", "lineSep": "\n", "mode": "PERMISSIVE"}
    assert _rows(tmp_path, "jsonl", data, options, JSON) == [(1, None), (None, '{\0"\0a\0"\0:\0"\0x\0"\0}\0')]
    latin = '{"a":1}\n{"a":"\xe9"}\n'.encode("latin-1")
    options = {"charset": "ISO-8859-1", "lineSep": "\n", "mode": "PERMISSIVE"}
    assert _rows(tmp_path, "jsonl", latin, options, JSON) == [(1, None), (None, '{"a":"\ufffd"}')]
    ascii_bad = b'{"a":"\xff"}\n'
    options = {"encoding": "us-ascii", "lineSep": "\n", "mode": "PERMISSIVE"}
    inferred = infer_schema(FileSourceOptions.parse({"path": str(tmp_path), "format": "jsonl", **options}))
    assert inferred.simpleString() == "struct<_corrupt_record:string,a:bigint>"  # latin's file is there
    (tmp_path / "part-0").write_bytes(ascii_bad)
    inferred = infer_schema(FileSourceOptions.parse({"path": str(tmp_path), "format": "jsonl", **options}))
    assert inferred.simpleString() == "struct<_corrupt_record:string>"  # a byte US-ASCII has not


def test_json_document_in_another_charset(tmp_path) -> None:
    (tmp_path / "d.json").write_bytes('[{"a":1}]'.encode("utf-16"))
    options = {"path": str(tmp_path), "format": "jsonl", "encoding": "UTF-16", "multiLine": "true"}
    schema = infer_schema(FileSourceOptions.parse(options))
    assert schema.simpleString() == "struct<a:bigint>"
    source = make_source(options, StructType([StructField("a", LongType())]))
    assert read(source, whole_files(source)).to_pylist() == [{"a": 1}]


@pytest.mark.parametrize(
    ("data", "options", "expected"),
    [
        (b"1,a;2,b\nc;3,d;", {"lineSep": ";"}, [(1, "a", None), (2, "b\nc", None), (3, "d", None)]),
        (b'1,"x;y";2,b', {"lineSep": ";"}, [(1, "x", None), (None, None, 'y"'), (2, "b", None)]),
        (b"1,aab2,b", {"lineSep": "ab"}, [(1, "a", None), (2, "b", None)]),
        (b"1,a\r\n2,b\r3,c", {"lineSep": "\r\n"}, [(1, "a", None), (2, "b\r3", "2,b\r3,c")]),
        (b"1,a;x,b\nc;", {"lineSep": ";"}, [(1, "a", None), (None, "b\nc", "x,b\nc")]),
        (b"1,a;;2,b", {"lineSep": ";"}, [(1, "a", None), (2, "b", None)]),
        (
            "1,\xe9\nx,\xe9\n".encode("latin-1"),
            {"encoding": "ISO-8859-1"},
            [(1, "é", None), (None, "é", "x,é")],
        ),
        (
            "1,\xe9\n2,b".encode("utf-16le"),
            {"encoding": "UTF-16LE", "lineSep": "\n"},
            [(1, "é", None), (2, "b", None)],
        ),
        # without lineSep, lines end at the byte 0A: the next line starts with its 00 (as Hadoop's reader)
        (
            "1,\xe9\n2,b".encode("utf-16le"),
            {"encoding": "utf-16le"},
            [(1, "é", None), (None, None, "㈀Ⰰ戀\ufffd")],
        ),
    ],
)
def test_csv_lines_end_at_line_sep_and_decode_from_the_charset(tmp_path, data, options, expected) -> None:
    assert _rows(tmp_path, "csv", data, {"mode": "PERMISSIVE", **options}, CSV) == expected


def test_csv_header_and_inference_follow_the_framing(tmp_path) -> None:
    (tmp_path / "part-0").write_bytes(b"id,name;1,a\n;2,b")
    options = {"path": str(tmp_path), "format": "csv", "lineSep": ";", "header": "true"}
    assert infer_schema(FileSourceOptions.parse(options)).simpleString() == "struct<id:string,name:string>"
    source = make_source(
        options, StructType([StructField("id", StringType()), StructField("name", StringType())])
    )
    assert read(source, whole_files(source)).to_pylist() == [
        {"id": "1", "name": "a\n"},
        {"id": "2", "name": "b"},
    ]
    (tmp_path / "part-0").write_bytes("x,\xe9\n2,b".encode("utf-16be"))
    options = {
        "path": str(tmp_path),
        "format": "csv",
        "charset": "UTF-16BE",
        "header": "true",
        "lineSep": "\n",
    }
    assert infer_schema(FileSourceOptions.parse(options)).simpleString() == "struct<x:string,é:string>"


def test_a_corrupt_gzip_keeps_the_lines_ended_by_line_sep_before_its_error(tmp_path) -> None:
    packed = gzip.compress(b"a;b;c;" * 2000, mtime=0)
    (tmp_path / "part-0.txt.gz").write_bytes(packed[: len(packed) - 8])  # cut before the trailer
    options = {"path": str(tmp_path), "format": "text", "lineSep": ";", "ignoreCorruptFiles": "true"}
    source = make_source(options, TEXT)
    values = read(source, whole_files(source)).column("value").to_pylist()
    assert len(values) == 6000 and set(values) == {"a", "b", "c"}


def test_framing_finds_separators_left_to_right() -> None:
    framing = LineFraming(b"aa")
    assert framing.lines(b"xaaayaa") == [(0, b"x"), (3, b"ay")]
    assert framing.whole_lines_end(b"xaaay") == 3 and framing.whole_lines_end(b"xy") == 0
    assert LineFraming(None).whole_lines_end(b"a\nb\rc") == 4


@pytest.mark.parametrize(
    ("options", "fragments"),
    [
        ({"format": "text", "lineSep": ""}, ["'lineSep'", "non-empty"]),
        ({"format": "jsonl", "lineSep": ""}, ["'lineSep'", "non-empty"]),
        ({"format": "csv", "lineSep": "abc"}, ["'lineSep'", "1 or 2 characters"]),
        ({"format": "csv", "encoding": "latin1"}, ["'encoding'", "'latin1'", "iso-8859-1, us-ascii"]),
        ({"format": "csv", "charset": "UTF8"}, ["'charset'", "utf-8"]),
        ({"format": "jsonl", "encoding": "UTF-16LE"}, ["'encoding'", "unless lineSep is set"]),
        ({"format": "jsonl", "encoding": "iso-8859-1"}, ["'encoding'", "unless lineSep is set"]),
        ({"format": "jsonl", "encoding": "UTF-16", "lineSep": "\n"}, ["'encoding'", "unless multiLine=true"]),
        ({"format": "jsonl", "charset": "bogus", "multiLine": "true"}, ["'charset'", "'bogus'"]),
        ({"format": "text", "encoding": "bogus", "lineSep": ";"}, ["'encoding'", "'bogus'", "charset"]),
    ],
)
def test_invalid_line_sep_and_charset_are_refused_naming_the_option(options, fragments) -> None:
    with pytest.raises(InvalidOptionError) as info:
        FileSourceOptions.parse({"path": "/x", **options})
    for fragment in fragments:
        assert fragment in str(info.value)


def test_charset_spellings_as_spark_takes_them() -> None:
    base = {"path": "/x", "format": "csv"}
    assert FileSourceOptions.parse({**base, "encoding": "Utf-16LE"}).charset == "utf-16le"
    assert FileSourceOptions.parse({**base, "encoding": "UTF-8", "charset": "bogus"}).charset == "utf-8"
    assert FileSourceOptions.parse({**base, "lineSep": "\r\n"}).custom_lines
    assert not FileSourceOptions.parse({**base, "encoding": "utf-8"}).custom_lines
    multi = FileSourceOptions.parse(
        {"path": "/x", "format": "jsonl", "encoding": "UTF-32", "multiLine": "true"}
    )
    assert multi.charset == "utf-32" and not multi.custom_lines
    parquet = FileSourceOptions.parse({"path": "/x", "format": "parquet", "lineSep": "", "encoding": "x"})
    assert parquet.line_sep is None  # ignored, as Spark's parquet source ignores them


def test_a_json_line_is_its_first_value_what_follows_is_ignored(tmp_path) -> None:
    """Spark's parser stops after a line's first value (reads and inference); pyarrow would read a
    second object on the line as another row."""
    data = b'{"a":2} {"b":3}\n{"a":4} xx\n{"a":5}}\n[{"a":6}] 7\n{"a":7} [1]\n{"a":8},\n5 {"a":9}\n'
    data += b'\n {"a":10}  \n'
    rows = _rows(tmp_path, "jsonl", data, {"mode": "PERMISSIVE"}, JSON)
    assert sorted(rows, key=repr) == sorted(
        [
            (2, None),
            (4, None),
            (5, None),
            (6, None),
            (7, None),
            (8, None),
            (10, None),
            (None, '5 {"a":9}'),
        ],
        key=repr,
    )
    inferred = infer_schema(
        FileSourceOptions.parse({"path": str(tmp_path), "format": "jsonl", "mode": "PERMISSIVE"})
    )
    assert inferred.simpleString() == "struct<_corrupt_record:string,a:bigint>"  # no b: it follows a value
    # a blank line in the chunk must not make two values on one line look like two lines
    assert _rows(tmp_path, "jsonl", b'{"a":2} {"a":3}\n\n{"a":4}\n', {}, JSON) == [(2, None), (4, None)]
    options = {"lineSep": "\n", "mode": "PERMISSIVE"}
    assert _rows(tmp_path, "jsonl", b'{"a":2}\r{"a":3}\n{"a":4}', options, JSON) == [(2, None), (4, None)]
