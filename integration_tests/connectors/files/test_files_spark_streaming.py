"""Streaming through Spark: files added while a query runs, admission control, restarts, bad options."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from integration_tests.connectors.files.conftest import write_jsonl

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

FMT = "files-unified"
SCHEMA = "id LONG, name STRING"


def _file(directory: Path, index: int, per_file: int = 100) -> list[int]:
    ids = list(range(index * per_file, (index + 1) * per_file))
    write_jsonl(directory, f"part-{index:04d}.jsonl", [{"id": i, "name": f"n{i:06d}"} for i in ids])
    return ids


def _stream(spark, directory: Path, **options: str):
    opts = {"format": "jsonl", "continuous": "true", "discoveryIntervalMs": "200", **options}
    return spark.readStream.format(FMT).options(**opts).schema(SCHEMA).load(str(directory))


def _wait_for(predicate, query, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert query.exception() is None, query.exception()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.3)


def _batch_rows(query) -> list[int]:
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]


def test_continuous_query_picks_up_files_added_while_it_runs(spark, data_dir, tmp_path) -> None:
    expected = _file(data_dir, 0) + _file(data_dir, 1)
    query = (
        _stream(spark, data_dir)
        .writeStream.format("memory")
        .queryName("files_continuous")
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:

        def count() -> int:
            return spark.sql("select count(*) from files_continuous").collect()[0][0]

        _wait_for(lambda: count() >= len(expected), query)
        expected += _file(data_dir, 2) + _file(data_dir, 3)
        _wait_for(lambda: count() >= len(expected), query)
        time.sleep(1.5)  # a duplicate would show up now
        ids = [r.id for r in spark.sql("select id from files_continuous").collect()]
    finally:
        query.stop()
    assert sorted(ids) == sorted(expected)


def test_max_files_per_trigger_with_available_now(spark, data_dir, tmp_path) -> None:
    expected = [i for f in range(6) for i in _file(data_dir, f)]
    query = (
        _stream(spark, data_dir, maxFilesPerTrigger="2")
        .writeStream.format("memory")
        .queryName("files_max_files")
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(240)
    assert query.exception() is None
    rows = _batch_rows(query)
    assert len(rows) == 3 and all(r == 200 for r in rows), rows
    ids = [r.id for r in spark.sql("select id from files_max_files").collect()]
    assert sorted(ids) == expected


def test_max_bytes_per_trigger_with_available_now(spark, data_dir, tmp_path) -> None:
    expected = [i for f in range(3) for i in _file(data_dir, f)]
    line = len(b'{"id": 100, "name": "n000100"}\n')  # every line of these files has this length
    total = sum(p.stat().st_size for p in data_dir.iterdir())
    limit = total // 5
    query = (
        _stream(spark, data_dir, maxBytesPerTrigger=str(limit))
        .writeStream.format("memory")
        .queryName("files_max_bytes")
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(240)
    assert query.exception() is None
    rows = _batch_rows(query)
    # a batch takes the lines that start in its byte ranges: at most limit/line + 1 per file touched
    assert len(rows) >= 5 and all(r <= limit // line + 3 for r in rows), (rows, limit // line)
    ids = [r.id for r in spark.sql("select id from files_max_bytes").collect()]
    assert sorted(ids) == expected


def test_restart_from_checkpoint_reads_only_new_files(spark, data_dir, tmp_path) -> None:
    out, chk = tmp_path / "out", tmp_path / "chk"

    def run() -> None:
        query = (
            _stream(spark, data_dir, maxFilesPerTrigger="1")
            .writeStream.format("parquet")
            .option("path", str(out))
            .option("checkpointLocation", str(chk))
            .trigger(availableNow=True)
            .start()
        )
        assert query.awaitTermination(240)
        assert query.exception() is None

    expected = _file(data_dir, 0) + _file(data_dir, 1)
    run()
    expected += _file(data_dir, 2)
    run()
    ids = [r.id for r in spark.read.parquet(str(out)).collect()]
    assert sorted(ids) == sorted(expected)


def test_parquet_stream_picks_up_new_files(spark, data_dir, tmp_path) -> None:
    def write(i: int) -> list[int]:
        ids = list(range(i * 500, (i + 1) * 500))
        pq.write_table(pa.table({"id": ids}), data_dir / f".p{i}.tmp", row_group_size=100)
        (data_dir / f".p{i}.tmp").rename(data_dir / f"p{i}.parquet")
        return ids

    expected = write(0)
    opts = {
        "format": "parquet",
        "continuous": "true",
        "discoveryIntervalMs": "200",
        "maxBytesPerTrigger": "1",
    }
    query = (
        spark.readStream.format(FMT)
        .options(**opts)
        .load(str(data_dir))
        .writeStream.format("memory")
        .queryName("files_parquet_stream")
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(processingTime="300 milliseconds")
        .start()
    )
    try:

        def count() -> int:
            return spark.sql("select count(*) from files_parquet_stream").collect()[0][0]

        _wait_for(lambda: count() >= len(expected), query)
        expected += write(1)
        _wait_for(lambda: count() >= len(expected), query)
        ids = [r.id for r in spark.sql("select id from files_parquet_stream").collect()]
    finally:
        query.stop()
    assert sorted(ids) == sorted(expected)
    assert max(_batch_rows(query)) <= 100  # one row group per batch with a tiny byte limit


def _start_fails(spark, df, tmp_path: Path, name: str, match: str) -> None:
    """A query that must not run fails with an error matching ``match``, raised by ``start()`` or by
    the query's first step (any other failure, such as Spark's worker start limit, surfaces whole)."""
    query = None
    with pytest.raises(Exception, match=match):
        query = (
            df.writeStream.format("memory")
            .queryName(name)
            .option("checkpointLocation", str(tmp_path / name))
            .start()
        )
        query.awaitTermination(120)
    assert query is None or not query.isActive


def test_invalid_stream_options_stop_the_query_before_it_reads(spark, data_dir, tmp_path) -> None:
    _file(data_dir, 0)
    _start_fails(
        spark,
        _stream(spark, data_dir, maxBytesPerTrigger="-1"),
        tmp_path,
        "files_bad_bytes",
        match="(?s)(?i:'maxbytespertrigger').*positive integer",
    )
    text = spark.readStream.format(FMT).options(format="text", continuous="true").schema("a INT")
    _start_fails(spark, text.load(str(data_dir)), tmp_path, "files_bad_schema", match="one string column")
