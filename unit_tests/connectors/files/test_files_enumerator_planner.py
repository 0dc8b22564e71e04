"""Discovery (static, continuous, recursive, glob), enumerator state, and the micro-batch planner."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from connector_base.spark import Backlog, ReadLimitOptions, admit
from connector_base.spark.enumerator_context import DriverEnumeratorContext
from connectors.files import FileEnumeratorState, FilePlanner, FileSourceOptions, FileSourceSplit, SplitKind
from connectors.files.listing import list_files
from connectors.files.source import FileSource, whole_file_split


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _enumerator(path, continuous, state=None, clock=None, **extra):
    opts = FileSourceOptions.parse(
        {
            "path": str(path),
            "format": "text",
            "continuous": str(continuous).lower(),
            "discoveryIntervalMs": "1000",
            **extra,
        }
    )
    ctx = DriverEnumeratorContext(clock or Clock())
    source = FileSource(opts, None)  # the enumerator needs no schema
    enum = source.restore_enumerator(ctx, state) if state else source.create_enumerator(ctx)
    enum.start()
    enum.add_reader(0)
    return enum, ctx


def _pull(enum, ctx, force=False):
    ctx.run_due(force=force)
    got = ctx.take_assigned()
    for _ in range(100):
        enum.handle_split_request(0)
        new = ctx.take_assigned()
        if not new:
            break
        got += new
    return [os.path.basename(s.path) for s in got]


def test_static_listing_assigns_every_file_once_then_no_more(tmp_path) -> None:
    for name in ("b.txt", "a.txt", "_SUCCESS", ".hidden"):
        (tmp_path / name).write_text("x\n")
    os.utime(tmp_path / "b.txt", (1, 1))  # oldest first
    enum, ctx = _enumerator(tmp_path, False)
    assert _pull(enum, ctx, force=True) == ["b.txt", "a.txt"]
    assert ctx.no_more_splits


def test_continuous_discovers_new_files_each_interval_and_restores(tmp_path) -> None:
    clock = Clock()
    (tmp_path / "a.txt").write_text("x\n")
    enum, ctx = _enumerator(tmp_path, True, clock=clock)
    assert _pull(enum, ctx) == ["a.txt"]
    (tmp_path / "b.txt").write_text("y\n")
    clock.now = 0.5
    assert _pull(enum, ctx) == []  # not due yet
    clock.now = 1.0
    assert _pull(enum, ctx) == ["b.txt"]
    assert not ctx.no_more_splits
    state = enum.snapshot_state(1)
    assert sorted(os.path.basename(p) for p in state.processed) == ["a.txt", "b.txt"]
    (tmp_path / "c.txt").write_text("z\n")
    restored, ctx2 = _enumerator(tmp_path, True, state=state)
    assert _pull(restored, ctx2, force=True) == ["c.txt"]


def test_pending_splits_survive_a_checkpoint(tmp_path) -> None:
    split = FileSourceSplit(str(tmp_path / "p.txt"), 0, 2, 2, 0, SplitKind.LINES)
    enum, ctx = _enumerator(tmp_path, False, state=FileEnumeratorState([], [split]))
    assert _pull(enum, ctx) == ["p.txt"]


def test_recursive_and_glob(tmp_path) -> None:
    (tmp_path / "d1" / "d2").mkdir(parents=True)
    (tmp_path / "top.jsonl").write_text("{}\n")
    (tmp_path / "d1" / "x.jsonl").write_text("{}\n")
    (tmp_path / "d1" / "d2" / "y.jsonl").write_text("{}\n")
    (tmp_path / "d1" / "d2" / "y.txt").write_text("{}\n")

    def names(path, recursive):
        return sorted(os.path.basename(s.path) for s in list_files(str(path), recursive))

    assert names(tmp_path, False) == ["top.jsonl"]
    assert names(tmp_path, True) == ["top.jsonl", "x.jsonl", "y.jsonl", "y.txt"]
    assert names(tmp_path / "*" / "*.jsonl", False) == ["x.jsonl"]
    assert names(str(tmp_path / "**" / "*.jsonl"), True) == ["top.jsonl", "x.jsonl", "y.jsonl"]
    assert names(tmp_path / "d1", False) == ["x.jsonl"]
    assert names("file:" + str(tmp_path / "top.jsonl"), False) == ["top.jsonl"]


def test_planner_cuts_and_backlog(tmp_path) -> None:
    opts = FileSourceOptions.parse({"path": str(tmp_path), "format": "jsonl", "splitSizeBytes": "100"})
    planner = FilePlanner(opts)
    lines = FileSourceSplit("/f", 0, 250, 250, 0, SplitKind.LINES)
    assert planner.backlog(lines, 20, 120) == Backlog(bytes=100)
    assert planner.cut(lines, 20, 250, None, 50) == 70
    assert planner.cut(lines, 20, 250, None, None) == 250
    assert [(r.offset, r.end) for r in planner.range_splits(lines, 20, 250)] == [
        (20, 120),
        (120, 220),
        (220, 250),
    ]
    assert planner.is_finished(lines, 250) and not planner.is_finished(lines, 249)
    gz = FileSourceSplit("/f.gz", 0, 1000, 1000, 0, SplitKind.GZIP)
    assert planner.cut(gz, 0, 1000, None, 999) == 0 and planner.cut(gz, 0, 1000, None, 1000) == 1000
    groups = FileSourceSplit("/f.parquet", 0, 10, 5000, 0, SplitKind.ROW_GROUPS)
    assert planner.backlog(groups, 2, 4) == Backlog(bytes=1000)
    assert planner.cut(groups, 2, 10, None, 1600) == 5
    assert planner.cut(groups, 2, 10, None, 1) == 3  # at least one row group, as at least one line


def test_a_small_file_is_not_starved_by_a_byte_maximum(tmp_path) -> None:
    """Files: a line (or row group) for a file whose byte share is 0; a gzip file only whole."""
    planner = FilePlanner(FileSourceOptions.parse({"path": str(tmp_path), "format": "jsonl"}))
    big = FileSourceSplit("/big", 0, 100_000, 100_000, 0, SplitKind.LINES)
    small = FileSourceSplit("/small", 0, 40, 40, 0, SplitKind.LINES)
    groups = FileSourceSplit("/g.parquet", 0, 4, 80, 0, SplitKind.ROW_GROUPS)
    gz = FileSourceSplit("/s.gz", 0, 60, 60, 0, SplitKind.GZIP)
    rng = {
        "big": (big, 0, 100_000),
        "small": (small, 0, 40),
        "groups": (groups, 0, 4),
        "gz": (gz, 0, 60),
    }
    out = admit(planner, rng, ReadLimitOptions(max_bytes=1000))
    assert out["small"] == 1 and out["groups"] == 1  # one line (read whole from byte 0), one row group
    assert out["gz"] == 0  # cannot be cut: waits until its share covers it
    assert 0 < out["big"] <= 1000


def test_parquet_split_counts_row_groups(tmp_path) -> None:
    pq.write_table(pa.table({"x": list(range(95))}), tmp_path / "a.parquet", row_group_size=10)
    (status,) = list_files(str(tmp_path), False)
    split = whole_file_split(status, FileSourceOptions.parse({"path": "/", "format": "parquet"}).format)
    assert split.kind is SplitKind.ROW_GROUPS and split.length == 10 and split.file_size == status.size
