"""What the differential harness against Spark's file sources found, pinned without Spark (issue 22):
line ends and BOMs as Hadoop's LineRecordReader, bzip2/deflate, PERMISSIVE partial rows, csv lines
with an open quote, invalid UTF-8, jsonl inference by Spark's rules, globs and empty Parquet files."""

from __future__ import annotations

import bz2
import gzip
import zlib

import pyarrow as pa
import pytest
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from connector_base import InvalidOptionError, MalformedRecordError, ReaderFailedError
from connectors.files import FileSourceOptions, schema_inference
from connectors.files.formats.base import count_lines, line_bounds
from connectors.files.json_inference import infer_jsonl
from connectors.files.listing import check_glob_matches, list_files
from connectors.files.options import FileFormat
from connectors.files.schema_inference import infer_schema
from connectors.files.source import whole_file_split
from unit_tests.connectors.files.helpers_files import make_source, read, read_ranges, whole_files

TEXT = StructType([StructField("value", StringType())])
ID_NAME = StructType([StructField("id", LongType()), StructField("name", StringType())])
CSV_ID_NAME = StructType([StructField("id", IntegerType()), StructField("name", StringType())])
CORRUPT = StructField("_corrupt_record", StringType())


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"a\rb\r", ["a", "b"]),
        (b"a\r\r\nb", ["a", "", "b"]),
        (b"a\r\nb\nc", ["a", "b", "c"]),
        (b"\r", [""]),
        (b"", []),
    ],
)
def test_a_lone_carriage_return_ends_a_line(data, lines) -> None:
    starts, ends = line_bounds(data)
    assert [data[s:e].decode() for s, e in zip(starts, ends, strict=True)] == lines
    assert count_lines(data) == count_lines(memoryview(data)) == len(lines)


@pytest.mark.parametrize("split_size", [None, 3])
def test_text_lines_end_at_lone_cr_and_the_bom_is_skipped(tmp_path, split_size) -> None:
    (tmp_path / "a.txt").write_bytes(b"\xef\xbb\xbfone\rtwo\r\nthree\n\xef\xbb\xbfkept")
    rows = read_ranges({"path": str(tmp_path), "format": "text"}, TEXT, split_size)
    assert [r["value"] for r in rows] == ["one", "two", "three", "\ufeffkept"]  # only the file's first BOM


def test_jsonl_and_csv_skip_the_bom_and_split_at_lone_cr(tmp_path) -> None:
    (tmp_path / "a.jsonl").write_bytes(b'\xef\xbb\xbf{"id": 1, "name": "a"}\r{"id": 2, "name": "b"}')
    assert read_ranges({"path": str(tmp_path / "a.jsonl"), "format": "jsonl"}, ID_NAME) == [
        {"id": 1, "name": "a"},
        {"id": 2, "name": "b"},
    ]
    (tmp_path / "b.csv").write_bytes(b"\xef\xbb\xbf\r \nid,name\r1,a\r2,b\r")  # blank lines before the header
    options = {"path": str(tmp_path / "b.csv"), "format": "csv", "header": "true"}
    assert infer_schema(FileSourceOptions.parse(options)).fieldNames() == ["id", "name"]
    assert read_ranges(options, CSV_ID_NAME) == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]


@pytest.mark.parametrize(("suffix", "pack"), [(".bz2", bz2.compress), (".deflate", zlib.compress)])
def test_bzip2_and_deflate_files_are_decompressed_whole(tmp_path, suffix, pack) -> None:
    (tmp_path / f"a.jsonl{suffix}").write_bytes(pack(b'{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n'))
    source = make_source({"path": str(tmp_path), "format": "jsonl"}, ID_NAME)
    (split,) = whole_files(source)
    assert split.kind.value == "gzip"  # a whole compressed file
    assert read(source, [split]).to_pylist() == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]


def test_a_truncated_bzip2_file_fails_naming_it(tmp_path) -> None:
    packed = bz2.compress(b"one\ntwo\n" * 100)
    (tmp_path / "a.txt.bz2").write_bytes(packed[:-10])
    with pytest.raises(ReaderFailedError, match=r"bzip2 file .*a\.txt\.bz2 cannot be decompressed"):
        read_ranges({"path": str(tmp_path), "format": "text"}, TEXT)


def test_permissive_keeps_the_fields_that_fit_as_spark(tmp_path) -> None:
    (tmp_path / "a.csv").write_bytes(b"1,a\n7,b,extra\n8\nx,kept\n")
    schema = StructType([*CSV_ID_NAME.fields, CORRUPT])
    rows = read_ranges({"path": str(tmp_path), "format": "csv", "mode": "PERMISSIVE"}, schema)
    assert [tuple(r.values()) for r in rows] == [
        (1, "a", None),
        (7, "b", "7,b,extra"),
        (8, None, "8"),
        (None, "kept", "x,kept"),
    ]
    lines = b'{"id": 1.5, "name": "k"}\n{"id": "x", "name": "l"}\n{"id": 1, "name":\n'
    (tmp_path / "b.jsonl").write_bytes(lines)
    rows = read_ranges({"path": str(tmp_path / "b.jsonl"), "format": "jsonl", "mode": "PERMISSIVE"}, ID_NAME)
    assert rows == [{"id": None, "name": "k"}, {"id": None, "name": "l"}, {"id": None, "name": None}]


def test_a_csv_line_with_an_open_quote_is_read_on_its_own(tmp_path) -> None:
    """Spark's multiLine=false: a quoted value never continues on the next line."""
    (tmp_path / "a.csv").write_bytes(b'1,"x\nsecond line"\n2,b\n3,"\n')
    rows = read_ranges({"path": str(tmp_path), "format": "csv", "mode": "DROPMALFORMED"}, CSV_ID_NAME)
    assert rows == [{"id": 1, "name": "x"}, {"id": 2, "name": "b"}, {"id": 3, "name": '"'}]


CSV_ID_V_W = StructType(
    [StructField("id", IntegerType()), StructField("v", StringType()), StructField("w", StringType())]
)

# (options, line, (v, w)) as Spark 4's csv source read them (mode PERMISSIVE, schema id, v, w)
SPARK_CSV_LINES = [
    ({}, r'"c \"d\"",z', ('c "d"', "z")),  # what Spark's CSV writer writes for c "d"
    ({}, '"a ""b""",z', ('"a ""b"""', "z")),  # a doubled quote is not an escape: read as written
    ({}, r"back\slash,z", ("back\\slash", "z")),  # no escape outside quotes
    ({}, '"x" ,z', ("x", "z")),  # whitespace after the closing quote is dropped before the delimiter
    ({}, '"x" y,z', ('"x" y', "z")),  # ... and kept, with the quotes, before anything else
    ({}, r'"a\\b",z', ("a\\b", "z")),
    ({}, '"",z', (None, "z")),
    ({}, ' "x",z', (' "x"', "z")),
    ({}, '"open', ("open", None)),  # a quote left open at the end of the line
    ({}, r'"x"\y,z', ('x"\\yz', None)),
    ({}, 'a"b,z', ('a"b', "z")),
    ({"escape": '"'}, '"a ""b""",z', ('a "b"', "z")),  # RFC 4180 files: set escape to the quote
    ({"escape": '"'}, r'"c \"d\"",z', (r'"c \"d\""', "z")),
    ({"nullValue": "NA", "emptyValue": "E"}, '"",z', ("E", "z")),
    ({"nullValue": "NA", "emptyValue": "E"}, ",z", (None, "z")),
    ({"nullValue": "NA", "emptyValue": "E"}, 'NA,"NA"', (None, None)),
    ({"ignoreLeadingWhiteSpace": "true", "ignoreTrailingWhiteSpace": "true"}, '  x  ,  "y"  ', ("x", "y")),
    ({"ignoreLeadingWhiteSpace": "true", "ignoreTrailingWhiteSpace": "true"}, ' "a" b ,z', ('"a" b', "z")),
    ({"unescapedQuoteHandling": "STOP_AT_CLOSING_QUOTE"}, '"a"b",z', ('a"b', "z")),
    ({"unescapedQuoteHandling": "STOP_AT_CLOSING_QUOTE"}, '"a"b,z', ('a"b,z', None)),
    ({"unescapedQuoteHandling": "BACK_TO_DELIMITER"}, '"a,b"c,z', ("a", "bc,z")),
    ({"unescapedQuoteHandling": "SKIP_VALUE"}, '"a"b,z', (None, "z")),
    ({"unescapedQuoteHandling": "SKIP_VALUE"}, 'x"y,z', ('x"y', "z")),
]


@pytest.mark.parametrize(("options", "line", "expected"), SPARK_CSV_LINES)
def test_csv_lines_split_as_sparks_parser_splits_them(tmp_path, options, line, expected) -> None:
    (tmp_path / "a.csv").write_text(f"0,plain,row\n1,{line}\n")
    opts = {"path": str(tmp_path), "format": "csv", "mode": "PERMISSIVE", **options}
    rows = read_ranges(opts, CSV_ID_V_W)
    assert rows == [{"id": 0, "v": "plain", "w": "row"}, {"id": 1, "v": expected[0], "w": expected[1]}]


def test_csv_written_by_spark_reads_back_as_written(tmp_path) -> None:
    """The bytes Spark 4's CSV writer (default options) wrote for these values."""
    values = ["plain", 'c "d"', "back\\slash", "comma, inside", 'both\\"', "\\", '"', "x\\", '""', 'a"b"c']
    written = '0,plain\n1,"c \\"d\\""\n2,back\\slash\n3,"comma, inside"\n4,"both\\\\\\""\n5,\\\n6,"\\""\n'
    written += '7,x\\\n8,"\\"\\""\n9,"a\\"b\\"c"\n'
    (tmp_path / "a.csv").write_text(written)
    rows = read_ranges({"path": str(tmp_path), "format": "csv"}, CSV_ID_NAME)
    assert rows == [{"id": i, "name": v} for i, v in enumerate(values)]


def test_csv_unescaped_quote_with_raise_error_fails_the_read_naming_the_file(tmp_path) -> None:
    (tmp_path / "a.csv").write_text('1,"a"b\n')
    for mode in ("PERMISSIVE", "DROPMALFORMED"):
        opts = {"path": str(tmp_path), "format": "csv", "unescapedQuoteHandling": "RAISE_ERROR", "mode": mode}
        with pytest.raises((MalformedRecordError, ReaderFailedError), match="a.csv"):
            read_ranges(opts, CSV_ID_NAME)


def test_invalid_utf8_is_replaced_in_csv_and_malformed_in_jsonl(tmp_path) -> None:
    (tmp_path / "a.csv").write_bytes(b"1,b\xff\n")
    rows = read_ranges({"path": str(tmp_path), "format": "csv"}, CSV_ID_NAME)
    assert rows == [{"id": 1, "name": "b\ufffd"}]
    (tmp_path / "b.jsonl").write_bytes(b'{"id": 1, "n\xffme": "a"}\n{"id": 2, "name": "b"}\n')
    options = {"path": str(tmp_path / "b.jsonl"), "format": "jsonl", "mode": "DROPMALFORMED"}
    assert read_ranges(options, ID_NAME) == [{"id": 2, "name": "b"}]


def _infer(lines: bytes, mode: str = "PERMISSIVE") -> StructType:
    options = FileSourceOptions.parse({"path": "/x", "format": "jsonl", "mode": mode})
    return infer_jsonl([("/x/a.jsonl", [(0, lines)])], options)


def test_jsonl_inference_follows_spark_rules() -> None:
    schema = _infer(
        b'{"z": 1, "a": "s", "n": null, "e": ""}\n'
        b'{"z": 2.5, "b": true, "l": [1, 2], "o": {"y": 1, "x": "q"}}\n'
        b'{"a": 3, "big": 123456789012345678901234}\n'
        b'[{"late": 1}]\n'
    )
    assert schema == StructType(
        [
            StructField("a", StringType()),  # a string and a number: string
            StructField("b", BooleanType()),
            StructField("big", DecimalType(24, 0)),
            StructField("e", StringType()),  # only "": undecided, then string
            StructField("l", ArrayType(LongType(), True)),
            StructField("late", LongType()),  # a top-level array holds records
            StructField("n", StringType()),
            StructField("o", StructType([StructField("x", StringType()), StructField("y", LongType())])),
            StructField("z", DoubleType()),  # bigint and double: double
        ]
    )


def test_jsonl_inference_treats_malformed_lines_by_mode() -> None:
    data = b'{"id": 1}\nnot json\n"a string"\n'
    assert _infer(data).fieldNames() == ["_corrupt_record", "id"]
    assert _infer(data, "DROPMALFORMED").fieldNames() == ["id"]
    with pytest.raises(MalformedRecordError, match=r"a\.jsonl at byte offset 10"):
        _infer(data, "FAILFAST")


def test_jsonl_inference_reads_every_file_in_chunks(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(schema_inference, "INFERENCE_CHUNK_BYTES", 7)
    (tmp_path / "a.jsonl").write_bytes(b'{"id": 1}\n{"id": 2}\r\n{"id": 3}')
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(b'{"id": 2}\n{"id": 3, "late": "x"}\n'))
    (tmp_path / "c.jsonl").write_bytes(b'{"id": 1}\n{"id": 2}\nbad\n')
    options = {"path": str(tmp_path), "format": "jsonl", "mode": "DROPMALFORMED"}
    assert infer_schema(FileSourceOptions.parse(options)).fieldNames() == ["id", "late"]
    with pytest.raises(MalformedRecordError, match=r"c\.jsonl at byte offset 20"):
        infer_schema(FileSourceOptions.parse({**options, "mode": "FAILFAST"}))


def test_a_glob_matching_nothing_fails_and_an_empty_parquet_file_has_no_rows(tmp_path) -> None:
    with pytest.raises(InvalidOptionError, match="PATH_NOT_FOUND"):
        check_glob_matches(str(tmp_path / "*.nomatch"), False)
    (tmp_path / "empty.parquet").write_bytes(b"")
    check_glob_matches(str(tmp_path / "*.parquet"), False)
    (status,) = list_files(str(tmp_path), False)
    split = whole_file_split(status, FileFormat.PARQUET)
    assert split.length == 0
    with pytest.raises(pa.ArrowInvalid):  # continuous: the enumerator tries it again at the next discovery
        whole_file_split(status, FileFormat.PARQUET, continuous=True)


def test_a_json_value_in_a_string_column_is_its_json_text(tmp_path) -> None:
    (tmp_path / "a.jsonl").write_bytes(b'{"id": 11, "name": true}\n{"id": "x", "name": {"a": [1, 2]}}\n')
    schema = StructType([StructField("id", StringType()), StructField("name", StringType())])
    rows = read_ranges({"path": str(tmp_path), "format": "jsonl", "mode": "DROPMALFORMED"}, schema)
    assert rows == [{"id": "11", "name": "true"}, {"id": "x", "name": '{"a": [1, 2]}'}]  # as written


def test_a_json_number_in_a_string_column_keeps_its_text(tmp_path) -> None:
    """Spark hands the value's text over as written (``1e2`` is not ``100.0``), at any depth."""
    lines = b'{"id": 1, "v": 1e2}\n{"id": 2, "v": -0.50, "n": {"s": [1.0, "x"]}}\n[{"id": 3, "v": 7E+1}]\n'
    (tmp_path / "a.jsonl").write_bytes(lines)
    nested = StructType([StructField("s", ArrayType(StringType()))])
    schema = StructType(
        [StructField("id", LongType()), StructField("v", StringType()), StructField("n", nested)]
    )
    rows = read_ranges({"path": str(tmp_path), "format": "jsonl"}, schema)
    assert rows == [
        {"id": 1, "v": "1e2", "n": None},
        {"id": 2, "v": "-0.50", "n": {"s": ["1.0", "x"]}},
        {"id": 3, "v": "7E+1", "n": None},
    ]


def test_a_json_value_in_a_nested_string_field_is_its_json_text(tmp_path) -> None:
    """Spark reads ``{"n": {"a": 1}}`` into ``n struct<a: string>`` as ``a = "1"`` (was: malformed)."""
    (tmp_path / "a.jsonl").write_bytes(
        b'{"id": 1, "n": {"a": 1, "b": [2, "x"]}}\n{"id": 2, "n": {"a": "s"}}\n'
    )
    nested = StructType([StructField("a", StringType()), StructField("b", ArrayType(StringType()))])
    schema = StructType([StructField("id", LongType()), StructField("n", nested)])
    rows = read_ranges({"path": str(tmp_path), "format": "jsonl", "mode": "DROPMALFORMED"}, schema)
    assert rows == [{"id": 1, "n": {"a": "1", "b": ["2", "x"]}}, {"id": 2, "n": {"a": "s", "b": None}}]


def test_a_top_level_json_array_of_objects_is_one_record_per_object(tmp_path) -> None:
    """As Spark's JSON source (was: a malformed line); an array of other values stays malformed."""
    (tmp_path / "a.jsonl").write_bytes(
        b'{"id": 1, "name": "a"}\n[{"id": 2, "name": "b"}, {"id": 3}]\n[]\n[4, 5]\n'
    )
    rows = read_ranges({"path": str(tmp_path), "format": "jsonl", "mode": "DROPMALFORMED"}, ID_NAME)
    assert rows == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": None}]
    with pytest.raises(ReaderFailedError, match="byte offset 62"):
        read_ranges({"path": str(tmp_path), "format": "jsonl"}, ID_NAME)


def test_decimals_are_read_as_spark_reads_them(tmp_path) -> None:
    """Exponents, a fraction rounded half up to the scale, JSON numbers and strings; too many digits
    is malformed (was: every such line malformed)."""
    dec = StructType([StructField("id", LongType()), StructField("amount", DecimalType(10, 2))])
    (tmp_path / "a.csv").write_bytes(b"1,1e2\n2,12.345\n3,-0.5\n4,123456789012.5\n5,x\n")
    rows = read_ranges({"path": str(tmp_path), "format": "csv", "mode": "DROPMALFORMED"}, dec)
    assert [(r["id"], str(r["amount"])) for r in rows] == [(1, "100.00"), (2, "12.35"), (3, "-0.50")]
    (tmp_path / "a.csv").unlink()
    (tmp_path / "a.jsonl").write_bytes(
        b'{"id": 1, "amount": 1e2}\n{"id": 2, "amount": 12.345}\n{"id": 3, "amount": "3.25"}\n'
        b'{"id": 4, "amount": 123456789012.5}\n{"id": 5, "amount": 7}\n'
    )
    rows = read_ranges({"path": str(tmp_path), "format": "jsonl", "mode": "DROPMALFORMED"}, dec)
    assert sorted((r["id"], str(r["amount"])) for r in rows) == [
        (1, "100.00"),
        (2, "12.35"),
        (3, "3.25"),
        (5, "7.00"),
    ]


def test_a_recovered_json_line_reads_naive_timestamps_as_utc(tmp_path) -> None:
    """A line taken by the slow path (a JSON number in a decimal column) reads its naive timestamp
    as the bulk path does, as UTC (was: the whole line malformed)."""
    from pyspark.sql.types import TimestampType

    schema = StructType(
        [
            StructField("id", LongType()),
            StructField("ts", TimestampType()),
            StructField("a", DecimalType(5, 2)),
        ]
    )
    (tmp_path / "a.jsonl").write_bytes(b'{"id": 1, "ts": "2024-01-02T03:04:05", "a": 7}\n')
    rows = read_ranges({"path": str(tmp_path), "format": "jsonl"}, schema)
    assert len(rows) == 1 and str(rows[0]["a"]) == "7.00"
    assert rows[0]["ts"].isoformat().startswith("2024-01-02T03:04:05")


def test_naive_timestamps_are_read_in_the_time_zone_offsets_keep_theirs(tmp_path) -> None:
    """As Spark's ``timeZone`` option (and the session's zone, which a task sees in its local
    properties): wall-clock times in New York, the earlier instant for an hour the clock shows twice."""
    import datetime as dt

    (tmp_path / "a.csv").write_text(
        "1,2024-01-02T03:04:05\n2,2024-07-02 03:04:05\n3,2024-01-02T03:04:05Z\n4,2024-11-03T01:30:00\n"
    )
    (tmp_path / "b.jsonl").write_text(
        '{"id": 1, "ts": "2024-01-02T03:04:05"}\n{"id": 3, "ts": "2024-01-02T03:04:05+01:00"}\n'
    )
    schema = StructType([StructField("id", IntegerType()), StructField("ts", TimestampType())])
    utc = dt.UTC
    opts = {"path": str(tmp_path / "a.csv"), "format": "csv", "timeZone": "America/New_York"}
    assert [r["ts"] for r in read_ranges(opts, schema)] == [
        dt.datetime(2024, 1, 2, 8, 4, 5, tzinfo=utc),
        dt.datetime(2024, 7, 2, 7, 4, 5, tzinfo=utc),
        dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=utc),
        dt.datetime(2024, 11, 3, 5, 30, tzinfo=utc),
    ]
    opts = {"path": str(tmp_path / "b.jsonl"), "format": "jsonl", "timeZone": "America/New_York"}
    assert [r["ts"] for r in read_ranges(opts, schema)] == [
        dt.datetime(2024, 1, 2, 8, 4, 5, tzinfo=utc),
        dt.datetime(2024, 1, 2, 2, 4, 5, tzinfo=utc),
    ]
    with pytest.raises(InvalidOptionError, match="timeZone"):
        FileSourceOptions.parse({"path": "/x", "format": "csv", "timeZone": "Mars/Olympus"})


def test_a_nested_value_of_the_wrong_kind_is_malformed_and_permissive_keeps_the_rest(tmp_path) -> None:
    """As Spark 4 read it: the line is malformed; PERMISSIVE keeps the struct's fields that fit."""
    (tmp_path / "a.jsonl").write_text(
        '{"id": 1, "n": {"a": 2, "b": "not an array"}}\n{"id": 2, "n": {"b": ["x"]}}\n'
    )
    nested = StructType([StructField("a", IntegerType()), StructField("b", ArrayType(StringType()))])
    schema = StructType([StructField("id", LongType()), StructField("n", nested)])
    opts = {"path": str(tmp_path), "format": "jsonl", "mode": "DROPMALFORMED"}
    assert read_ranges(opts, schema) == [{"id": 2, "n": {"a": None, "b": ["x"]}}]
    rows = read_ranges({**opts, "mode": "PERMISSIVE"}, schema)
    assert rows == [{"id": 1, "n": {"a": 2, "b": None}}, {"id": 2, "n": {"a": None, "b": ["x"]}}]
