"""csv ``multiLine=true``: each expectation is what Spark 4 read from the same bytes (checked with the
venv's pyspark, local[1], ``mode=PERMISSIVE`` and ``id INT, name STRING, _corrupt_record STRING``)."""

from __future__ import annotations

import pytest
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from connectors.files import FileSourceOptions
from connectors.files.formats.csv import csv_records
from connectors.files.formats.csv_tokens import Dialect, Tokenizer
from connectors.files.schema_inference import infer_schema
from unit_tests.connectors.files.helpers_files import make_source, read, whole_files

SCHEMA = StructType(
    [
        StructField("id", IntegerType()),
        StructField("name", StringType()),
        StructField("_corrupt_record", StringType()),
    ]
)


@pytest.mark.parametrize(
    ("data", "options", "expected"),
    [
        (b'1,"a\nb"\n2,c\n', {}, [(1, "a\nb", None), (2, "c", None)]),
        (b'1,"a\r\nb"\r\n2,c\r\n', {}, [(1, "a\nb", None), (2, "c", None)]),  # \r\n found first: \n in values
        (b'1,"a\nb"\r\n2,c\r\n', {}, [(1, "a\nb", None), (2, "c\r", None)]),  # \n found first: \r is text
        (b'1,a\r\n2,"b\nc"\n3,d\n', {}, [(1, "a", None), (2, "b\nc", None), (3, "d", None)]),
        (b"1,a\n2,b\r3,c\r\n4,d\n", {}, [(1, "a", None), (2, "b\r3", "2,b\r3,c"), (4, "d", None)]),
        (b'1,"a\rb"\r2,c\r', {}, [(1, "a\nb", None), (2, "c", None)]),
        (b"x,c\r", {}, [(None, "c\r", "x,c")]),  # a last \r alone decides nothing
        (b'1,"a\n\nb"\n\n2,c\n', {}, [(1, "a\n\nb", None), (2, "c", None)]),
        (b"1,a\n   \n2,b\n", {}, [(1, "a", None), (None, None, "   "), (2, "b", None)]),  # a blank record
        (b'1,"a\nb\n', {}, [(1, "a\nb\n", None)]),  # open to the end of the file
        (b'1,"a"x\nb",c\n2,d\n', {}, [(1, '"a"x', None), (None, "c", 'b",c'), (2, "d", None)]),
        (b'\xef\xbb\xbf1,"a\nb"\n', {}, [(1, "a\nb", None)]),
        (b'1,"a\\"\nb"\n2,c\n', {}, [(1, 'a"\nb', None), (2, "c", None)]),
        (b'1,"a;b";2,c;', {"lineSep": ";"}, [(1, "a;b", None), (2, "c", None)]),  # lineSep kept in values
        ('1,"\xe9\nb"\n'.encode("latin-1"), {"encoding": "ISO-8859-1"}, [(1, "é\nb", None)]),
        (b'1,"a""b\nc"\n', {}, [(1, '"a""b', None), (None, None, 'c"')]),  # unescaped: to the line's end
        (b'1,"a\nb"\r\nx,"c"\r\n', {}, [(1, "a\nb", None), (None, "c", 'x,"c"')]),
        (
            b"1,a\rx,c\r7,a,extra\r8",
            {},
            [(1, "a", None), (None, "c", "x,c"), (7, "a", "7,a,extra"), (8, None, "8")],
        ),
    ],
)
def test_records_span_lines_as_spark_reads_them(tmp_path, data, options, expected) -> None:
    (tmp_path / "part-0.csv").write_bytes(data)
    opts = {"path": str(tmp_path), "format": "csv", "multiLine": "true", "mode": "PERMISSIVE", **options}
    source = make_source(opts, SCHEMA)
    assert [tuple(r.values()) for r in read(source, whole_files(source)).to_pylist()] == expected


def test_header_and_inference_read_records(tmp_path) -> None:
    (tmp_path / "part-0.csv").write_bytes(b'"i\nd",name\n1,"a\nb"\n2,x\n')
    opts = {"path": str(tmp_path), "format": "csv", "multiLine": "true", "header": "true"}
    assert infer_schema(FileSourceOptions.parse(opts)).simpleString() == "struct<i\nd:string,name:string>"
    (tmp_path / "part-0.csv").write_bytes(b'1,"a\nb"\n2,x\n3')
    opts = {"path": str(tmp_path), "format": "csv", "multiLine": "true", "inferSchema": "true"}
    assert infer_schema(FileSourceOptions.parse(opts)).simpleString() == "struct<_c0:int,_c1:string>"


def test_records_of_a_text() -> None:
    tokenizer = Tokenizer(Dialect())
    assert csv_records('a,"b\nc"\n\nd\n', None, tokenizer) == ['a,"b\nc"', "d"]
    assert csv_records('a,"b', None, tokenizer) == ['a,"b']
    assert csv_records("a|b|", "|", tokenizer) == ["a", "b"]
