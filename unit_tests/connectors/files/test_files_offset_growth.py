"""The files-unified streaming offset stays flat however many files go through (issue 17, growth).

The bridge's stream reader is driven on the driver as Spark drives it (``latestOffset``,
``partitions``, ``commit``), without running tasks: every file must be planned exactly once, and the
offset must not carry the files already processed once ``cleanSource`` or ``maxFileAge`` let them go.
Files are hard links to one small file per round (one system call each, and a round's mtime).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import StringType, StructField, StructType

from connectors.files import FileSourceSplitSerializer
from connectors.files.datasource import FilesDataSource

SCHEMA = StructType([StructField("value", StringType())])
BASE_MTIME_S = 1_700_000_000


class DriverQuery:
    """A streaming query's driver side without Spark: one micro-batch per ``step``."""

    def __init__(self, path: Path, **options: str) -> None:
        opts = {"format": "text", "continuous": "true", "discoveryIntervalMs": "1", **options}
        self.reader = FilesDataSource({"path": str(path), **opts}).streamReader(SCHEMA)
        self.offset: dict[str, Any] = self.reader.initialOffset()
        self.planned: list[str] = []

    def step(self) -> dict[str, Any]:
        end = self.reader.latestOffset(self.offset, self.reader.getDefaultReadLimit())
        serializer = FileSourceSplitSerializer()
        for part in self.reader.partitions(self.offset, end):
            self.planned.extend(serializer.loads(s).path for s in part.splits)
        self.reader.commit(end)
        self.offset = end
        return end


def add_round(directory: Path, round_no: int, files: int, stash: Path) -> None:
    """``files`` new files in ``directory`` whose mtime is ``round_no`` seconds after a base."""
    stash.mkdir(exist_ok=True)
    src = stash / f"r{round_no:05d}.txt"
    src.write_text(f"round {round_no}\n")
    mtime = BASE_MTIME_S + round_no
    os.utime(src, (mtime, mtime))
    for i in range(files):
        os.link(src, directory / f"r{round_no:05d}-{i:05d}.txt")


def size(offset: dict[str, Any]) -> int:
    return len(json.dumps(offset))


def processed(offset: dict[str, Any]) -> int:
    return len(offset["enumerator"]["data"]["processed"])


@pytest.mark.timeout(120)
def test_offset_stays_flat_over_100k_files_with_clean_source_delete(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    query = DriverQuery(src, cleanSource="delete")
    rounds, per_round = 50, 2_000
    sizes = []
    for r in range(rounds):
        add_round(src, r, per_round, tmp_path / "stash")
        end = query.step()
        sizes.append(size(end))
        assert processed(end) <= per_round  # only the files of this batch, none of the earlier ones
    assert len(query.planned) == rounds * per_round == len(set(query.planned))  # each file once
    assert not any(src.iterdir())  # every committed file deleted
    assert max(sizes) <= sizes[0] * 1.01, f"offset grew: first {sizes[0]} bytes, largest {max(sizes)}"


@pytest.mark.timeout(120)
def test_max_file_age_forgets_old_files_and_ignores_late_old_ones(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    query = DriverQuery(src, maxFileAge="3s")  # files stay in place; age alone bounds the offset
    per_round = 500
    sizes = []
    for r in range(20):
        add_round(src, r, per_round, tmp_path / "stash")
        end = query.step()
        sizes.append(size(end))
        # the newest is round r: rounds r-3..r are remembered (the floor moves after each listing)
        assert processed(end) <= 4 * per_round
    assert len(query.planned) == 20 * per_round == len(set(query.planned))
    assert max(sizes[4:]) <= sizes[4] * 1.01, sizes
    # a file that shows up late with an mtime older than the newest minus maxFileAge is ignored
    late = src / "late.txt"
    late.write_text("late\n")
    os.utime(late, (BASE_MTIME_S + 10, BASE_MTIME_S + 10))
    before = len(query.planned)
    query.step()
    assert len(query.planned) == before


def test_without_retention_every_file_stays_in_the_offset(tmp_path: Path) -> None:
    """The baseline the options fix: files kept, no age limit in reach, so the offset grows."""
    src = tmp_path / "in"
    src.mkdir()
    query = DriverQuery(src)
    for r in range(3):
        add_round(src, r, 200, tmp_path / "stash")
        end = query.step()
    assert processed(end) == 600


def test_clean_source_archive_keeps_the_source_path_under_the_archive(tmp_path: Path) -> None:
    src, archive = tmp_path / "in", tmp_path / "archive"
    src.mkdir()
    (src / "a.txt").write_text("a\n")
    query = DriverQuery(src, cleanSource="archive", sourceArchiveDir=str(archive))
    query.step()
    assert not (src / "a.txt").exists()
    moved = archive / str(src / "a.txt").lstrip(os.sep)
    assert moved.read_text() == "a\n"


def test_latest_first_with_max_files_per_trigger_reads_the_newest_first(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for r in range(5):
        add_round(src, r, 1, tmp_path / "stash")
    query = DriverQuery(src, latestFirst="true", maxFilesPerTrigger="2", maxFileAge="1s")
    query.step()
    assert sorted(os.path.basename(p) for p in query.planned) == ["r00003-00000.txt", "r00004-00000.txt"]
    while len(query.planned) < 5:  # maxFileAge is not applied with latestFirst + maxFilesPerTrigger
        query.step()
    assert len(set(query.planned)) == 5
