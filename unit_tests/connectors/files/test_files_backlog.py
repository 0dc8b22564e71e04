"""The files enumerator reports backlog (FLIP-309) from its pending files, with hysteresis."""

from __future__ import annotations

import pytest

from connector_base import InvalidOptionError
from connector_base.backlog_status import BacklogStatus
from connector_base.testing import RecordingEnumeratorContext
from connectors.files import FileSourceOptions
from connectors.files.enumerator import BACKLOG_ENTER_FILES
from connectors.files.source import FileSource


def test_pending_files_enter_backlog_and_leave_it_when_all_are_assigned(tmp_path) -> None:
    for i in range(BACKLOG_ENTER_FILES + 2):
        (tmp_path / f"f{i:02d}.txt").write_text("x\n")
    opts = FileSourceOptions.parse({"path": str(tmp_path), "format": "text"})
    ctx = RecordingEnumeratorContext()
    enum = FileSource(opts, None).create_enumerator(ctx)
    enum.start()
    ctx.run_async_calls()
    assert ctx.backlog_reports == [True]
    for _ in range(BACKLOG_ENTER_FILES + 1):
        enum.handle_split_request(0)
    assert ctx.backlog_reports == [True]  # one file still pending: above the exit threshold
    enum.handle_split_request(0)
    assert ctx.backlog_reports == [True, False]


def test_a_few_files_are_no_backlog(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    ctx = RecordingEnumeratorContext()
    opts = FileSourceOptions.parse({"path": str(tmp_path), "format": "text"})
    enum = FileSource(opts, None).create_enumerator(ctx)
    enum.start()
    ctx.run_async_calls()
    enum.handle_split_request(0)
    assert not ctx.processing_backlog and True not in ctx.backlog_reports


def test_exit_must_be_below_enter() -> None:
    with pytest.raises(InvalidOptionError, match="a value below 5"):
        BacklogStatus(RecordingEnumeratorContext(), 5, 5, "pending files")
