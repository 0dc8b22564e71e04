"""cleanSource and maxFileAge through Spark: committed files are archived, late old files ignored."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from integration_tests.connectors.files.conftest import write_jsonl

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

SCHEMA = "id LONG"


def _file(directory: Path, index: int, mtime_s: float | None = None) -> list[int]:
    ids = list(range(index * 10, index * 10 + 10))
    path = write_jsonl(directory, f"part-{index:03d}.jsonl", [{"id": i} for i in ids])
    if mtime_s is not None:
        os.utime(path, (mtime_s, mtime_s))
    return ids


def _run(spark, src: Path, out: Path, chk: Path, archive: Path) -> None:
    query = (
        spark.readStream.format("files-unified")
        .options(format="jsonl", maxFileAge="1h", cleanSource="archive", sourceArchiveDir=str(archive))
        .schema(SCHEMA)
        .load(str(src))
        .writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(chk))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(240)
    assert query.exception() is None, query.exception()


def test_clean_source_archives_and_max_file_age_ignores_a_late_old_file(spark, data_dir, tmp_path) -> None:
    out, chk, archive = tmp_path / "out", tmp_path / "chk", tmp_path / "archive"
    expected = _file(data_dir, 0) + _file(data_dir, 1)
    _run(spark, data_dir, out, chk, archive)
    # Spark commits a batch to its source when it plans the next one (as for its own file source),
    # so the files of the run's last batch stay until the query runs again
    expected += _file(data_dir, 2)  # new: read
    _file(data_dir, 3, mtime_s=time.time() - 2 * 3600)  # older than the newest minus maxFileAge: ignored
    _run(spark, data_dir, out, chk, archive)
    ids = sorted(r.id for r in spark.read.parquet(str(out)).collect())
    assert ids == sorted(expected)
    archived = sorted(p.name for p in archive.rglob("*.jsonl"))
    assert archived == ["part-000.jsonl", "part-001.jsonl"]  # committed, then archived
    assert (archive / str(data_dir).lstrip(os.sep) / "part-000.jsonl").exists()  # source path kept
    left = sorted(p.name for p in data_dir.iterdir())
    assert left == ["part-002.jsonl", "part-003.jsonl"]  # 2: its batch not yet committed; 3: never read
