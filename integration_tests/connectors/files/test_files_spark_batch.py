"""Batch reads through Spark: every format, the modes, gzip, recursive/glob, metadata, bad options."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from integration_tests.connectors.files.conftest import write_jsonl

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

FMT = "files-unified"


def _records(first: int, n: int) -> list[dict]:
    return [{"id": i, "name": f"name-{i}", "score": i * 0.5} for i in range(first, first + n)]


def _write(directory: Path, fmt: str, files: int = 3, per_file: int = 200) -> list[tuple]:
    expected = []
    for f in range(files):
        recs = _records(f * per_file, per_file)
        expected += [(r["id"], r["name"], r["score"]) for r in recs]
        path = directory / f"part-{f}.{fmt}"
        if fmt == "jsonl":
            write_jsonl(directory, path.name, recs)
        elif fmt == "csv":
            path.write_text(
                "id,name,score\n" + "".join(f"{r['id']},{r['name']},{r['score']}\n" for r in recs)
            )
        elif fmt == "text":
            path.write_text("".join(f"{r['id']},{r['name']},{r['score']}\n" for r in recs))
        else:
            pq.write_table(pa.Table.from_pylist(recs), path, row_group_size=50)
    return expected


@pytest.mark.parametrize("fmt", ["text", "jsonl", "csv", "parquet"])
def test_bounded_read_of_every_format_with_its_default_schema(spark, data_dir, fmt) -> None:
    expected = _write(data_dir, fmt)
    reader = spark.read.format(FMT).option("format", fmt).option("splitSizeBytes", "2000")
    df = reader.option("header", "true").load(str(data_dir)) if fmt == "csv" else reader.load(str(data_dir))
    rows = df.collect()
    if fmt == "text":
        assert df.schema.simpleString() == "struct<value:string>"
        assert sorted(r.value for r in rows) == sorted(f"{i},{n},{s}" for i, n, s in expected)
    elif fmt == "csv":  # as Spark's csv source without inferSchema: every column a string
        assert df.schema.simpleString() == "struct<id:string,name:string,score:string>"
        assert sorted((int(r.id), r.name, float(r.score)) for r in rows) == sorted(expected)
    else:
        assert df.schema.simpleString() == "struct<id:bigint,name:string,score:double>"
        assert sorted((r.id, r.name, r.score) for r in rows) == sorted(expected)


def test_jsonl_with_a_user_schema_matches_spark_read_json(spark, data_dir) -> None:
    _write(data_dir, "jsonl")
    schema = "id INT, name STRING, missing STRING"
    ours = spark.read.format(FMT).option("format", "jsonl").schema(schema).load(str(data_dir))
    theirs = spark.read.schema(schema).json(str(data_dir))
    assert ours.schema == theirs.schema
    assert sorted(ours.collect()) == sorted(theirs.collect())


def test_csv_user_schema_and_dialect_match_spark_read_csv(spark, data_dir) -> None:
    (data_dir / "a.csv").write_text('k|v\n1|"a|b"\n2|\n3|c\n')
    schema = "k INT, v STRING"
    opts = {"header": "true", "sep": "|", "quote": '"'}
    ours = spark.read.format(FMT).option("format", "csv").options(**opts).schema(schema).load(str(data_dir))
    theirs = spark.read.options(**opts).schema(schema).csv(str(data_dir))
    assert sorted(ours.collect()) == sorted(theirs.collect())


def test_malformed_lines_follow_mode(spark, data_dir) -> None:
    (data_dir / "bad.jsonl").write_text('{"id": 1}\n{"id": oops}\n{"id": 3}\n')
    base = spark.read.format(FMT).option("format", "jsonl")
    # match=: any other failure (Spark's worker start limit on a loaded machine) surfaces whole
    with pytest.raises(Exception, match=r"(?s)bad\.jsonl.*byte offset 10"):
        base.schema("id LONG").load(str(data_dir)).collect()
    dropped = base.option("mode", "DROPMALFORMED").schema("id LONG").load(str(data_dir)).collect()
    assert sorted(r.id for r in dropped) == [1, 3]
    kept = base.option("mode", "PERMISSIVE").schema("id LONG, _corrupt_record STRING").load(str(data_dir))
    assert sorted(kept.collect(), key=lambda r: r._corrupt_record or "") == [
        (1, None),
        (3, None),
        (None, '{"id": oops}'),
    ]


def test_gzip_and_plain_files_together(spark, data_dir) -> None:
    (data_dir / "a.jsonl.gz").write_bytes(
        gzip.compress(b"".join(json.dumps({"id": i}).encode() + b"\n" for i in range(500)))
    )
    write_jsonl(data_dir, "b.jsonl", [{"id": i} for i in range(500, 600)])
    df = spark.read.format(FMT).option("format", "jsonl").option("splitSizeBytes", "100").schema("id LONG")
    assert sorted(r.id for r in df.load(str(data_dir)).collect()) == list(range(600))


def test_recursive_and_glob(spark, data_dir) -> None:
    write_jsonl(data_dir, "top.jsonl", [{"id": 0}])
    write_jsonl(data_dir / "2024" / "01", "deep.jsonl", [{"id": 1}])
    write_jsonl(data_dir / "2024", "mid.json", [{"id": 2}])
    df = spark.read.format(FMT).option("format", "jsonl").schema("id LONG")
    assert [r.id for r in df.load(str(data_dir)).collect()] == [0]
    assert sorted(r.id for r in df.option("recursive", "true").load(str(data_dir)).collect()) == [0, 1, 2]
    assert [r.id for r in df.load(str(data_dir / "*" / "*.json")).collect()] == [2]


def test_metadata_columns(spark, data_dir) -> None:
    (data_dir / "a.txt").write_text("x\nyy\nzzz\n")
    df = spark.read.format(FMT).option("format", "text").option("includeMetadata", "true").load(str(data_dir))
    assert df.schema.simpleString() == "struct<value:string,_file:string,_offset:bigint>"
    assert sorted((r.value, r._offset) for r in df.collect()) == [("x", 0), ("yy", 2), ("zzz", 5)]
    assert {r._file for r in df.collect()} == {str(data_dir / "a.txt")}
    user = spark.read.format(FMT).option("format", "jsonl").option("includeMetadata", "true")
    write_jsonl(data_dir / "j", "a.jsonl", [{"id": 7}])
    rows = user.schema("id LONG, _offset LONG").load(str(data_dir / "j")).collect()
    assert [tuple(r) for r in rows] == [(7, 0)]


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"format": "jsonl"}, "'path'"),
        ({"path": "{dir}", "format": "avro"}, "'format'"),
        ({"path": "{dir}/nope", "format": "jsonl"}, "'path'"),
        ({"path": "{dir}", "format": "jsonl", "splitSizeBytes": "ten"}, "'splitSizeBytes'"),
        ({"path": "{dir}", "format": "jsonl", "maxFilesPerTrigger": "0"}, "'maxFilesPerTrigger'"),
        ({"path": "{dir}", "format": "jsonl", "recursive": "sometimes"}, "'recursive'"),
        ({"path": "{dir}", "format": "csv", "inferSchema": "sometimes"}, "'inferSchema'"),
    ],
)
def test_invalid_options_fail_at_load(spark, data_dir, options, fragment) -> None:
    write_jsonl(data_dir, "a.jsonl", [{"id": 1}])
    opts = {k: v.replace("{dir}", str(data_dir)) for k, v in options.items()}
    # (?i): Spark passes option keys lower-cased
    with pytest.raises(Exception, match=f"(?i){re.escape(fragment)}"):
        spark.read.format(FMT).options(**opts).load().schema  # noqa: B018


def test_schema_mistakes_fail_at_load(spark, data_dir) -> None:
    write_jsonl(data_dir, "a.jsonl", [{"id": 1}])
    with pytest.raises(Exception, match="includeMetadata"):
        spark.read.format(FMT).option("format", "jsonl").option("includeMetadata", "true").schema(
            "id LONG"
        ).load(str(data_dir)).collect()
    with pytest.raises(Exception, match="one string column"):
        spark.read.format(FMT).option("format", "text").schema("a INT").load(str(data_dir)).collect()


def test_small_files_are_packed_into_few_partitions(spark, data_dir) -> None:
    for i in range(40):
        write_jsonl(data_dir, f"tiny-{i:02d}.jsonl", [{"id": i}])
    df = spark.read.format(FMT).option("format", "jsonl").schema("id LONG").load(str(data_dir))
    assert df.rdd.getNumPartitions() <= 4  # like Spark's maxPartitionBytes packing, not one task per file
    assert sorted(r.id for r in df.collect()) == list(range(40))
