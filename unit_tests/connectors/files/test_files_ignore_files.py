"""``ignoreMissingFiles`` and ``ignoreCorruptFiles``, as Spark 4 reads the same files.

Spark (checked with the venv's pyspark: a DataFrame loaded, one file deleted, then collected)
fails with ``false`` and reads the other files with ``true``.
"""

from __future__ import annotations

import gzip
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql.types import LongType, StructField, StructType

from connector_base import DataLossError, InvalidOptionError, ReaderFailedError
from connectors.files import FileSourceOptions
from connectors.files.schema_inference import infer_schema
from unit_tests.connectors.files.helpers_files import make_source, read, whole_files

ID = StructType([StructField("id", LongType())])


@pytest.mark.parametrize("fmt", ["jsonl", "jsonl.gz", "parquet"])
def test_a_file_deleted_after_listing_fails_the_read_unless_ignored(tmp_path, fmt) -> None:
    for i in range(3):
        path = tmp_path / f"f{i}.{fmt}"
        if fmt == "parquet":
            pq.write_table(pa.table({"id": [i]}), path)
        elif fmt.endswith(".gz"):
            path.write_bytes(gzip.compress(b'{"id": %d}\n' % i))
        else:
            path.write_bytes(b'{"id": %d}\n' % i)
    base = {"path": str(tmp_path), "format": fmt.split(".")[0]}
    for ignore in ("false", "true"):
        source = make_source({**base, "ignoreMissingFiles": ignore}, ID)
        splits = whole_files(source)
        (tmp_path / f"f1.{fmt}").rename(tmp_path / f"_gone.{fmt}")
        try:
            if ignore == "false":
                with pytest.raises(
                    (DataLossError, ReaderFailedError), match="deleted after it was discovered"
                ):
                    read(source, splits)
            else:
                assert sorted(read(source, splits).column("id").to_pylist()) == [0, 2]
        finally:
            (tmp_path / f"_gone.{fmt}").rename(tmp_path / f"f1.{fmt}")


def test_ignore_missing_files_takes_true_or_false() -> None:
    with pytest.raises(InvalidOptionError, match="ignoreMissingFiles.*true or false"):
        FileSourceOptions.parse({"path": "/x", "format": "text", "ignoreMissingFiles": "yes"})


# ignoreCorruptFiles: the rows Spark 4 returned for the same bytes (checked with the venv's pyspark)
LINES = b"".join(b'{"id": %d}\n' % i for i in range(40))


@pytest.mark.parametrize(
    ("name", "data", "ids"),
    [
        ("trailer.json.gz", gzip.compress(LINES, mtime=0)[:-6], list(range(40))),  # only the trailer lost
        ("no-lf.json.gz", gzip.compress(LINES.rstrip(), mtime=0)[:-5], list(range(39))),  # the cut line goes
        ("garbage.json.gz", b"this is not compressed\n", []),
        ("garbage.json.bz2", b"this is not compressed\n", []),
    ],
)
def test_ignore_corrupt_files_keeps_the_lines_read_before_the_error(tmp_path, name, data, ids) -> None:
    (tmp_path / name).write_bytes(data)
    (tmp_path / "ok.json").write_bytes(b'{"id": 100}\n')
    options = {"path": str(tmp_path), "format": "jsonl", "ignoreCorruptFiles": "true"}
    source = make_source(options, ID)
    assert sorted(read(source, whole_files(source)).column("id").to_pylist()) == [*ids, 100]
    assert infer_schema(FileSourceOptions.parse(options)).simpleString() == "struct<id:bigint>"
    with pytest.raises((DataLossError, ReaderFailedError), match=name):
        source = make_source({**options, "ignoreCorruptFiles": "false"}, ID)
        read(source, whole_files(source))


def test_ignore_corrupt_files_keeps_a_document_read_before_the_error(tmp_path) -> None:
    (tmp_path / "a.json.gz").write_bytes(gzip.compress(LINES, mtime=0)[:-6])  # first document whole
    (tmp_path / "b.json.gz").write_bytes(gzip.compress(b'[{"id": 7}, ' + LINES[:-1] + b"]")[:30])
    options = {"path": str(tmp_path), "format": "jsonl", "multiLine": "true", "ignoreCorruptFiles": "true"}
    source = make_source(options, ID)
    assert read(source, whole_files(source)).column("id").to_pylist() == [0]
    assert infer_schema(FileSourceOptions.parse(options)).simpleString() == "struct<id:bigint>"


def test_ignore_corrupt_files_skips_a_parquet_file_that_is_not_parquet(tmp_path) -> None:
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64())}), tmp_path / "a.parquet")
    (tmp_path / "b.parquet").write_bytes(b"PAR1 this is not parquet")
    os.utime(tmp_path / "b.parquet", (2_000_000_000, 2_000_000_000))  # newest (a.parquet is first by path)
    options = {"path": str(tmp_path), "format": "parquet", "ignoreCorruptFiles": "true"}
    source = make_source(options, ID)
    assert read(source, whole_files(source)).column("id").to_pylist() == [1, 2]
    assert infer_schema(FileSourceOptions.parse(options)).simpleString() == "struct<id:bigint>"
    # Spark infers a Parquet schema from the first file by path (not the oldest, checked with
    # Spark 4): when that one is corrupt, both fail
    os.utime(tmp_path / "b.parquet", (1, 1))
    assert infer_schema(FileSourceOptions.parse(options)).simpleString() == "struct<id:bigint>"
    (tmp_path / "a.parquet").rename(tmp_path / "c.parquet")
    with pytest.raises(InvalidOptionError, match="b.parquet"):
        infer_schema(FileSourceOptions.parse(options))
