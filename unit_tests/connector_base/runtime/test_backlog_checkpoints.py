"""FLIP-309 in the local runtime: checkpoint intervals follow the backlog status the enumerator reports."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Sequence

import pytest

from connector_base import Boundedness, SourceReaderContext, SplitEnumerator, SplitEnumeratorContext
from connector_base.errors import InvalidOptionError
from connector_base.runtime import LocalRuntime
from connector_base.runtime.checkpoint_scheduler import CheckpointConfig, CheckpointScheduler
from connector_base.serialization import FunctionSerializer
from connector_base.source import Source
from connector_base.testing import RecordingEnumeratorContext
from unit_tests.connector_base.in_memory import ListEmitter, ListReader, ListSplit, ListSplitReader


class _BacklogEnumerator(SplitEnumerator[ListSplit, int]):
    """Assigns one split; reports backlog until ``leave_backlog`` is set."""

    def __init__(self, context: SplitEnumeratorContext[ListSplit], leave_backlog: threading.Event) -> None:
        self._context = context
        self._leave = leave_backlog

    def start(self) -> None:
        self._context.set_is_processing_backlog(True)
        self._context.call_async(self._leave.is_set, self._on_poll, period_s=0.01)

    def _on_poll(self, left: bool | None, error: BaseException | None) -> None:
        if left:
            self._context.set_is_processing_backlog(False)

    def add_reader(self, subtask_id: int) -> None:
        self._context.assign_split(ListSplit("s", tuple(range(10))), subtask_id)

    def handle_split_request(self, subtask_id: int, requester_hostname: str | None = None) -> None:
        pass

    def add_splits_back(self, splits: Sequence[ListSplit], subtask_id: int) -> None:
        pass

    def snapshot_state(self, checkpoint_id: int) -> int:
        return checkpoint_id


class _BacklogSource(Source[int, ListSplit, int]):
    def __init__(self) -> None:
        self.leave_backlog = threading.Event()

    @property
    def boundedness(self) -> Boundedness:
        return Boundedness.CONTINUOUS_UNBOUNDED

    def create_enumerator(self, context: SplitEnumeratorContext[ListSplit]) -> _BacklogEnumerator:
        return _BacklogEnumerator(context, self.leave_backlog)

    def restore_enumerator(
        self, context: SplitEnumeratorContext[ListSplit], checkpoint: int
    ) -> _BacklogEnumerator:
        return _BacklogEnumerator(context, self.leave_backlog)

    def create_reader(self, context: SourceReaderContext) -> ListReader:
        return ListReader(ListSplitReader, ListEmitter(), context)

    @property
    def split_serializer(self) -> FunctionSerializer[ListSplit]:
        return FunctionSerializer(
            1,
            lambda s: {"name": s.name, "records": list(s.records), "start": s.start},
            lambda d: ListSplit(d["name"], tuple(d["records"]), d["start"]),
        )

    @property
    def enumerator_checkpoint_serializer(self) -> FunctionSerializer[int]:
        return FunctionSerializer(1, lambda n: n, int)


def _gaps(history: list[tuple[float, int, bool]], backlog: bool) -> list[float]:
    times = [t for t, _cid, b in history if b is backlog]
    return [b - a for a, b in zip(times, times[1:], strict=False)]


def _wait_for(rt: LocalRuntime, backlog: bool, count: int, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while sum(1 for _t, _c, b in rt.checkpoint_history if b is backlog) < count:
        rt.check_errors()
        assert time.monotonic() < deadline, rt.checkpoint_history
        time.sleep(0.02)


def test_checkpoints_at_the_backlog_interval_then_the_normal_one() -> None:
    source = _BacklogSource()
    config = {"checkpoint.interval": "100ms", "checkpoint.interval-during-backlog": "400ms"}
    with LocalRuntime(source, checkpoint_config=config) as rt:
        rt.start()
        _wait_for(rt, True, 3)
        assert rt.processing_backlog
        source.leave_backlog.set()
        _wait_for(rt, False, 6)
        assert not rt.processing_backlog
        history = list(rt.checkpoint_history)
    in_backlog = _gaps(history, True)
    live = _gaps(history, False)
    # never earlier than the interval; later only by scheduling (the machine may be loaded)
    assert all(g >= 0.38 for g in in_backlog), in_backlog
    assert all(g >= 0.09 for g in live), live
    assert statistics.median(live) < statistics.median(in_backlog), (live, in_backlog)


def test_no_interval_during_backlog_means_no_checkpoints_in_backlog() -> None:
    source = _BacklogSource()
    with LocalRuntime(source, checkpoint_config={"checkpoint.interval": 100}) as rt:
        rt.start()
        time.sleep(0.6)
        assert rt.checkpoint_history == []
        source.leave_backlog.set()
        _wait_for(rt, False, 2)
        history = list(rt.checkpoint_history)
    assert not any(b for _t, _c, b in history), history


def test_leaving_backlog_checkpoints_at_once_when_the_normal_interval_has_passed() -> None:
    now = [0.0]
    scheduler = CheckpointScheduler(CheckpointConfig(1_000, 60_000), lambda: now[0])
    scheduler.set_processing_backlog(True)
    now[0] = 5.0
    assert not scheduler.is_due()
    scheduler.set_processing_backlog(False)
    assert scheduler.is_due()
    scheduler.checkpoint_taken()
    assert scheduler.next_due() == 6.0


@pytest.mark.parametrize("raw", ["0", "-5", "soon", "10 parsecs"])
def test_bad_interval_names_the_option(raw: str) -> None:
    with pytest.raises(InvalidOptionError, match="checkpoint.interval-during-backlog"):
        CheckpointConfig.from_options({"checkpoint.interval-during-backlog": raw})


def test_recording_context_keeps_every_report() -> None:
    ctx: RecordingEnumeratorContext[ListSplit] = RecordingEnumeratorContext()
    assert not ctx.processing_backlog
    ctx.set_is_processing_backlog(True)
    ctx.set_is_processing_backlog(False)
    assert ctx.backlog_reports == [True, False] and not ctx.processing_backlog
