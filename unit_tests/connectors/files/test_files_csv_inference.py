"""csv ``inferSchema`` and ``samplingRatio``: each expectation is what Spark 4 inferred and read from
the same bytes (checked with the venv's pyspark, local[1], session time zone UTC)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from connector_base import InvalidOptionError
from connectors.files import FileSourceOptions
from connectors.files.csv_inference import CsvInference
from connectors.files.inference_sample import InferenceSample
from connectors.files.schema_inference import infer_schema
from unit_tests.connectors.files.helpers_files import make_source, read, whole_files

UTC = dt.UTC


def _infer_and_read(tmp_path, files: list[bytes], **options: str) -> tuple[str, list[tuple]]:
    for i, data in enumerate(files):
        (tmp_path / f"part-{i}.csv").write_bytes(data)
    opts = {"path": str(tmp_path), "format": "csv", "inferSchema": "true", "mode": "PERMISSIVE", **options}
    schema = infer_schema(FileSourceOptions.parse(opts))
    source = make_source(opts, schema)
    return schema.simpleString(), [tuple(r.values()) for r in read(source, whole_files(source)).to_pylist()]


@pytest.mark.parametrize(
    ("field", "spark_type", "value"),
    [
        ("1", "int", 1),
        ("+1", "int", 1),
        ("007", "int", 7),
        (" 1", "double", 1.0),  # Integer.parseInt refuses blanks, Double.parseDouble trims them
        ("2147483648", "bigint", 2147483648),
        ("9223372036854775808", "decimal(19,0)", Decimal("9223372036854775808")),
        ("9" * 38, "decimal(38,0)", Decimal("9" * 38)),
        ("9" * 39, "double", 1e39),
        ("1.5", "double", 1.5),
        ("1e5", "double", 100000.0),  # a negative scale is no decimal
        ("5.", "decimal(1,0)", Decimal(5)),
        ("-Infinity", "double", float("-inf")),
        ("inf", "string", "inf"),
        ("1.5d", "double", 1.5),
        ("0x10", "string", "0x10"),
        ("1_000", "string", "1_000"),
        ("tRuE", "boolean", True),
        ("yes", "string", "yes"),
        ("2024-01-01", "date", dt.date(2024, 1, 1)),
        ("2024-1-1", "timestamp", dt.datetime(2024, 1, 1, tzinfo=UTC)),  # dates are strict yyyy-MM-dd
        ("2024-01-01 10:00", "timestamp", dt.datetime(2024, 1, 1, 10, tzinfo=UTC)),
        ("2024-01-01T10:00:00+01:00", "timestamp", dt.datetime(2024, 1, 1, 9, tzinfo=UTC)),
        ("2024", "int", 2024),
    ],
)
def test_one_field_infers_and_reads_as_spark(tmp_path, field, spark_type, value) -> None:
    schema, rows = _infer_and_read(tmp_path, [f"{field}\n".encode()], timeZone="UTC")
    assert schema == f"struct<_c0:{spark_type}>"
    assert rows == [(value,)] or (value != value and rows[0][0] != rows[0][0])


@pytest.mark.parametrize(
    ("lines", "spark_type"),
    [
        (["1", "2147483648"], "bigint"),
        (["1", "1.5"], "double"),
        (["2147483648", "1.5"], "double"),
        (["1", "true"], "string"),
        (["1", "2024-01-01"], "string"),
        (["2024-01-01", "2024-01-01 10:00:00"], "timestamp"),
        (["1", "99999999999999999999"], "decimal(20,0)"),
        (["99999999999999999999", "1.5"], "double"),
        (["1", ""], "int"),
        (["NaN", "1"], "double"),
        (["", ""], ""),  # blank lines only: no column, as Spark's struct<>
    ],
)
def test_types_merge_down_a_column_as_spark(tmp_path, lines, spark_type) -> None:
    (tmp_path / "part-0.csv").write_bytes(("\n".join(lines) + "\n").encode())
    opts = {"path": str(tmp_path), "format": "csv", "inferSchema": "true"}
    expected = f"struct<_c0:{spark_type}>" if spark_type else "struct<>"
    assert infer_schema(FileSourceOptions.parse(opts)).simpleString() == expected


def test_header_null_value_ragged_lines_and_files(tmp_path) -> None:
    schema, rows = _infer_and_read(tmp_path, [b"id,name\n1,a\nNA,b\n"], header="true", nullValue="NA")
    assert schema == "struct<id:int,name:string>" and rows == [(1, "a"), (None, "b")]
    for f in tmp_path.iterdir():
        f.unlink()
    schema, rows = _infer_and_read(tmp_path, [b"1,a\n2\n3,b,c\n"])
    assert schema == "struct<_c0:int,_c1:string>" and sorted(rows) == [(1, "a"), (2, None), (3, "b")]
    for f in tmp_path.iterdir():
        f.unlink()
    schema, _rows = _infer_and_read(tmp_path, [b"1\n2\n", b"1.5\n", b"a\n"])
    assert schema == "struct<_c0:string>"


def test_files_merge_leaving_a_conflict_undecided_as_spark_partitions_do() -> None:
    inference = CsvInference(1, "")
    inference.infer_file([["true"]])
    inference.infer_file([["1"]])  # boolean and int do not merge: undecided (Spark's mergeRowTypes)
    assert inference.types == [("null",)]
    inference.infer_file([["2"]])
    assert [t.simpleString() for t in inference.spark_types()] == ["int"]


def test_inference_reads_line_sep_and_encoding(tmp_path) -> None:
    (tmp_path / "part-0.csv").write_bytes("id;1;2.5;".encode("utf-16le"))
    opts = {"path": str(tmp_path), "format": "csv", "inferSchema": "true", "header": "true"}
    opts |= {"lineSep": ";", "encoding": "UTF-16LE"}
    assert infer_schema(FileSourceOptions.parse(opts)).simpleString() == "struct<id:double>"


def test_sampling_ratio_keeps_evenly_spaced_records() -> None:
    half = InferenceSample(0.5)
    assert [half.keep() for _ in range(6)] == [True, False, True, False, True, False]
    assert all(InferenceSample(1.0).keep() for _ in range(5))
    assert InferenceSample(0.995).every and not InferenceSample(0.99).every  # Spark: all above 0.99


def test_sampling_ratio_shapes_json_and_csv_inference(tmp_path) -> None:
    (tmp_path / "part-0.json").write_bytes(b'{"a": 1}\n{"b": 2}\n{"c": 3}\n{"d": 4}\n')
    opts = {"path": str(tmp_path), "format": "jsonl", "samplingRatio": "0.5"}
    assert infer_schema(FileSourceOptions.parse(opts)).simpleString() == "struct<a:bigint,c:bigint>"
    (tmp_path / "part-0.json").unlink()
    (tmp_path / "part-0.csv").write_bytes(b"1\nx\n2\ny\n")
    opts = {"path": str(tmp_path), "format": "csv", "inferSchema": "true", "samplingRatio": "0.5"}
    assert infer_schema(FileSourceOptions.parse(opts)).simpleString() == "struct<_c0:int>"


@pytest.mark.parametrize(
    ("options", "fragments"),
    [
        ({"format": "csv", "inferSchema": "yes"}, ["'inferSchema'", "true or false"]),
        ({"format": "csv", "samplingRatio": "0"}, ["'samplingRatio'", "above 0"]),
        ({"format": "jsonl", "samplingRatio": "-1"}, ["'samplingRatio'", "above 0"]),
        ({"format": "jsonl", "samplingRatio": "abc"}, ["'samplingRatio'", "'abc'"]),
    ],
)
def test_invalid_inference_options_are_refused(options, fragments) -> None:
    with pytest.raises(InvalidOptionError) as info:
        FileSourceOptions.parse({"path": "/x", **options}).sampling_ratio  # noqa: B018 - read when inferring
    for fragment in fragments:
        assert fragment in str(info.value)


def test_formats_without_inference_ignore_its_options_as_spark() -> None:
    text = FileSourceOptions.parse(
        {"path": "/x", "format": "text", "samplingRatio": "abc", "inferSchema": "x"}
    )
    assert text.sampling_ratio == 1.0 and not text.infer_types
    assert not FileSourceOptions.parse({"path": "/x", "format": "jsonl", "inferSchema": "true"}).infer_types
    assert (
        FileSourceOptions.parse({"path": "/x", "format": "csv", "samplingRatio": "2"}).sampling_ratio == 2.0
    )


def test_a_sampling_ratio_is_checked_only_when_inference_reads_it(tmp_path) -> None:
    """Spark reads ``samplingRatio=0`` with a schema given (inference never looks at it), and
    refuses it when it infers (the differential harness found files-unified refusing both)."""
    (tmp_path / "part-0.json").write_bytes(b'{"a": 1}\n')
    opts = FileSourceOptions.parse({"path": str(tmp_path), "format": "jsonl", "samplingRatio": "0"})
    with pytest.raises(InvalidOptionError, match="'samplingRatio'.*above 0"):
        infer_schema(opts)
