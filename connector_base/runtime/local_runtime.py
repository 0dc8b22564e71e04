"""``LocalRuntime``: runs a ``Source`` in-process, without Spark.

One coordinator thread owns the enumerator (every enumerator method runs on it, as in Flink's
``SourceCoordinator``); each reader runs on its own thread, polling its ``SourceReader`` and
collecting output. Checkpoints are consistent cuts: the coordinator stops assigning, every reader
snapshots its splits at the same moment it commits the output it has emitted so far, then the
enumerator snapshots. A failed reader rolls back to the last checkpoint: its uncommitted output is
dropped and its splits (as of that checkpoint, plus those assigned since) go back to the enumerator
through ``add_splits_back``, so nothing is lost or duplicated.

Threading: the coordinator thread runs enumerator calls and handlers of ``call_async`` (the
callables themselves run on a small worker pool); reader threads call only their own reader; the
caller's thread talks to both through queues and futures.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import json
import logging
import os
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from connector_base.enumerator import ReaderInfo, SplitEnumerator, SplitEnumeratorContext
from connector_base.errors import ConnectorError, SerializationError
from connector_base.event_time.watermark_strategy import WatermarkStrategy
from connector_base.runtime.checkpoint_scheduler import CheckpointConfig, CheckpointScheduler
from connector_base.runtime.reader_event_time import DEFAULT_AUTO_WATERMARK_INTERVAL_MS, ReaderEventTime
from connector_base.runtime.watermark_alignment_coordinator import WatermarkAlignmentCoordinator
from connector_base.serialization import Json
from connector_base.source import Source
from connector_base.source_reader import InputStatus, SourceReader, SourceReaderContext
from connector_base.split import SourceSplit

__all__ = ["LocalRuntime", "RuntimeCheckpoint", "rows_of"]

LOG = logging.getLogger(__name__)

T = TypeVar("T")
"""The record type."""
SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""
EnumStateT = TypeVar("EnumStateT")
"""The enumerator checkpoint type."""

CHECKPOINT_VERSION = 1


def rows_of(batch: Any) -> list[Any]:
    """Rows of an Arrow batch or table as tuples; other batches as a list."""
    columns = getattr(batch, "columns", None)
    if columns is not None and hasattr(batch, "num_rows"):
        return list(zip(*[c.to_pylist() for c in columns], strict=True)) if batch.num_rows else []
    return list(batch)


@dataclass
class RuntimeCheckpoint:
    """A consistent checkpoint: the enumerator state and each reader's splits (serialized)."""

    checkpoint_id: int
    enumerator: Json
    readers: dict[int, list[Json]]
    committed_records: int = 0

    def to_json(self) -> dict[str, Any]:
        """Versioned JSON."""
        return {
            "v": CHECKPOINT_VERSION,
            "checkpointId": self.checkpoint_id,
            "enumerator": self.enumerator,
            "readers": {str(k): v for k, v in sorted(self.readers.items())},
            "committedRecords": self.committed_records,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RuntimeCheckpoint:
        """Read a checkpoint of a supported version."""
        match data.get("v"):
            case 1:
                return cls(
                    int(data["checkpointId"]),
                    data["enumerator"],
                    {int(k): list(v) for k, v in data["readers"].items()},
                    int(data.get("committedRecords", 0)),
                )
            case other:
                raise SerializationError(
                    f"unsupported runtime checkpoint version {other!r}; this release reads 1"
                )

    def save(self, path: str) -> None:
        """Write atomically (temp file + rename)."""
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".ckpt-", dir=directory)
        with os.fdopen(fd, "w") as f:
            json.dump(self.to_json(), f, sort_keys=True)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str) -> RuntimeCheckpoint:
        """Read a checkpoint file."""
        with open(path) as f:
            return cls.from_json(json.load(f))


class _CollectingOutput:
    """A reader's output: records since the last checkpoint are pending until it completes."""

    def __init__(self) -> None:
        self.pending: list[Any] = []

    def collect(self, record: Any) -> None:
        self.pending.append(record)

    def collect_batch(self, batch: Any) -> None:
        self.pending.extend(rows_of(batch))


@dataclass(order=True)
class _Timer:
    due: float
    seq: int
    action: Callable[[], None] = field(compare=False)


class _CoordinatorContext(SplitEnumeratorContext[SplitT]):
    def __init__(self, runtime: LocalRuntime[Any, SplitT, Any]) -> None:
        self._rt = runtime

    def current_parallelism(self) -> int:
        return self._rt.parallelism

    def registered_readers(self) -> Mapping[int, ReaderInfo]:
        return {i: ReaderInfo(i) for i in self._rt._registered}

    def assign_splits(self, assignment: Mapping[int, Sequence[SplitT]]) -> None:
        for subtask, splits in assignment.items():
            self._rt._assign(subtask, list(splits))

    def signal_no_more_splits(self, subtask_id: int) -> None:
        self._rt._no_more(subtask_id)

    def call_async(
        self,
        callable_: Callable[[], Any],
        handler: Callable[[Any, BaseException | None], None],
        initial_delay_s: float = 0.0,
        period_s: float | None = None,
    ) -> None:
        self._rt._schedule_async(callable_, handler, initial_delay_s, period_s)

    def run_in_coordinator_thread(self, action: Callable[[], Any]) -> None:
        self._rt._events.put(action)

    def set_is_processing_backlog(self, is_processing_backlog: bool) -> None:
        self._rt._set_backlog(is_processing_backlog)


class _ReaderThread(Generic[T, SplitT]):
    """One reader and its thread; commands arrive through an inbox processed between polls."""

    def __init__(self, runtime: LocalRuntime[T, SplitT, Any], subtask: int) -> None:
        self.runtime = runtime
        self.subtask = subtask
        self.context = SourceReaderContext(subtask, runtime.parallelism, dict(runtime.reader_config))
        self.reader: SourceReader[T, SplitT] = runtime.source.create_reader(self.context)
        self.output = _CollectingOutput()
        self.event_time: ReaderEventTime[T] | None = None
        if runtime.watermark_strategy is not None:
            self.event_time = ReaderEventTime(
                runtime.watermark_strategy,
                self.output,
                self.reader,
                functools.partial(runtime._report_watermark, subtask),
                self.context.config,
                runtime.auto_watermark_interval_ms,
            )
        self.committed: list[Any] = []
        self.inbox: queue.Queue[Callable[[], None]] = queue.Queue()
        self.finished = threading.Event()
        self.stopped = threading.Event()
        self.error: BaseException | None = None
        self.assigned_since_checkpoint: list[SplitT] = []
        self.last_checkpoint_splits: list[SplitT] = []
        self.thread = threading.Thread(target=self._run, name=f"local-reader-{subtask}", daemon=True)

    def _drain_inbox(self) -> None:
        while True:
            try:
                cmd = self.inbox.get_nowait()
            except queue.Empty:
                return
            cmd()

    def _run(self) -> None:
        try:
            self.reader.start()
            self._forward_requests()
            while not self.stopped.is_set():
                self._drain_inbox()
                if self.stopped.is_set():
                    break
                event_time = self.event_time
                if event_time is not None and event_time.blocked:  # whole-reader alignment
                    event_time.tick()
                    self.inbox_wait(0.01)
                    continue
                status = self.reader.poll_next(self.output if event_time is None else event_time.output)
                self._forward_requests()
                if event_time is not None:
                    event_time.tick()
                if status is InputStatus.END_OF_INPUT:
                    if not self.finished.is_set():
                        if event_time is not None:
                            event_time.end_of_input()
                        self.finished.set()
                        self.runtime._events.put(lambda: None)
                    self.inbox_wait(0.05)
                elif status is InputStatus.NOTHING_AVAILABLE:
                    fut = self.reader.is_available()
                    deadline = time.monotonic() + 0.1
                    while not fut.done() and self.inbox.empty() and time.monotonic() < deadline:
                        try:
                            fut.result(timeout=0.01)
                        except Exception:
                            pass
        except BaseException as e:  # reported to the caller
            LOG.warning("reader %d failed: %s", self.subtask, e)
            self.error = e
            self.finished.set()
            self.runtime._events.put(lambda: None)

    def inbox_wait(self, timeout: float) -> None:
        try:
            cmd = self.inbox.get(timeout=timeout)
        except queue.Empty:
            return
        cmd()

    def _forward_requests(self) -> None:
        while self.context.split_requests:
            subtask = self.context.split_requests.pop()
            self.runtime._events.put(functools.partial(self.runtime._handle_split_request, subtask))

    def close(self, timeout: float) -> None:
        self.stopped.set()
        self.thread.join(timeout)
        self.reader.close()


class LocalRuntime(Generic[T, SplitT, EnumStateT]):
    """Runs a source with ``parallelism`` readers in this process; see the module docstring."""

    def __init__(
        self,
        source: Source[T, SplitT, EnumStateT],
        parallelism: int = 1,
        checkpoint_path: str | None = None,
        reader_config: Mapping[str, Any] | None = None,
        close_timeout_s: float = 10.0,
        checkpoint_config: CheckpointConfig | Mapping[str, Any] | None = None,
        watermark_strategy: WatermarkStrategy[Any] | None = None,
        auto_watermark_interval_ms: int = DEFAULT_AUTO_WATERMARK_INTERVAL_MS,
    ) -> None:
        """``checkpoint_config``: periodic checkpoints (``checkpoint.interval``,
        ``checkpoint.interval-during-backlog``, see checkpoint_scheduler.py); none by default.
        ``watermark_strategy``: per-split watermarks, idleness and split alignment (see
        ``reader_event_time.py``), generators asked every ``auto_watermark_interval_ms``."""
        if parallelism < 1:
            raise ValueError(f"parallelism must be >= 1, got {parallelism}")
        self.source = source
        self.parallelism = parallelism
        self.checkpoint_path = checkpoint_path
        self.reader_config = dict(reader_config or {})
        self.close_timeout_s = close_timeout_s
        self.watermark_strategy = watermark_strategy
        self.auto_watermark_interval_ms = auto_watermark_interval_ms
        alignment = watermark_strategy.alignment if watermark_strategy is not None else None
        self._alignment = WatermarkAlignmentCoordinator(alignment) if alignment is not None else None
        self._events: queue.Queue[Callable[[], None]] = queue.Queue()
        self._timers: list[_Timer] = []
        self._seq = itertools.count()
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="enumerator-async")
        self._readers: dict[int, _ReaderThread[T, SplitT]] = {}
        self._registered: set[int] = set()
        self._no_more_splits: set[int] = set()
        self._enumerator: SplitEnumerator[SplitT, EnumStateT] | None = None
        self._context: _CoordinatorContext[SplitT] = _CoordinatorContext(self)
        self._coordinator = threading.Thread(target=self._coordinate, name="local-coordinator", daemon=True)
        self._stop = threading.Event()
        self._checkpoint_id = 0
        self._committed_before_restore = 0
        self._error: BaseException | None = None
        if not isinstance(checkpoint_config, CheckpointConfig):
            checkpoint_config = CheckpointConfig.from_options(checkpoint_config or {})
        self._scheduler = CheckpointScheduler(checkpoint_config, time.monotonic)
        self.checkpoint_history: list[tuple[float, int, bool]] = []
        """``(monotonic time, checkpoint id, processing backlog)`` of every completed checkpoint."""

    # --- lifecycle ------------------------------------------------------------------------------
    def start(self, restore_from: RuntimeCheckpoint | str | None = None) -> None:
        """Start the enumerator and the readers (from a checkpoint or file when given)."""
        if isinstance(restore_from, str):
            restore_from = RuntimeCheckpoint.load(restore_from)
        self._coordinator.start()
        started: Future[None] = Future()

        def init() -> None:
            try:
                if restore_from is None:
                    self._enumerator = self.source.create_enumerator(self._context)
                else:
                    state = self.source.enumerator_checkpoint_serializer.deserialize(restore_from.enumerator)
                    self._enumerator = self.source.restore_enumerator(self._context, state)
                    self._checkpoint_id = restore_from.checkpoint_id
                    self._committed_before_restore = restore_from.committed_records
                self._enumerator.start()
                for i in range(self.parallelism):
                    self._start_reader(i)
                    if restore_from is not None and restore_from.readers.get(i):
                        serializer = self.source.split_serializer
                        splits = [serializer.deserialize(s) for s in restore_from.readers[i]]
                        self._readers[i].last_checkpoint_splits = list(splits)
                        self._deliver(i, splits)
                    self._registered.add(i)
                    self._enumerator.add_reader(i)
                started.set_result(None)
            except BaseException as e:  # handed to the caller's future
                started.set_exception(e)

        self._events.put(init)
        started.result(timeout=60)

    def _start_reader(self, subtask: int) -> None:
        rt: _ReaderThread[T, SplitT] = _ReaderThread(self, subtask)
        self._readers[subtask] = rt
        rt.thread.start()

    def stop(self) -> None:
        """Stop every thread (readers, coordinator, async pool) within the close timeout."""
        self._stop.set()
        self._events.put(lambda: None)
        for rt in self._readers.values():
            rt.close(self.close_timeout_s)
        self._coordinator.join(self.close_timeout_s)
        if self._enumerator is not None:
            self._enumerator.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
        alive = [
            t.name for t in [self._coordinator, *(r.thread for r in self._readers.values())] if t.is_alive()
        ]
        if alive:
            raise ConnectorError(f"threads {alive} did not stop within {self.close_timeout_s}s")

    def __enter__(self) -> LocalRuntime[T, SplitT, EnumStateT]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- coordinator --------------------------------------------------------------------------
    def _coordinate(self) -> None:
        while not self._stop.is_set():
            timeout = 0.05
            if self._timers:
                timeout = max(0.0, min(timeout, self._timers[0].due - time.monotonic()))
            checkpoint_due = self._scheduler.next_due()
            if checkpoint_due is not None:
                timeout = max(0.0, min(timeout, checkpoint_due - time.monotonic()))
            try:
                event = self._events.get(timeout=timeout)
            except queue.Empty:
                event = None
            try:
                if event is not None:
                    event()
                now = time.monotonic()
                while self._timers and self._timers[0].due <= now:
                    heapq.heappop(self._timers).action()
                if self._enumerator is not None and self._scheduler.is_due():
                    self._take_checkpoint(60.0)
            except BaseException as e:  # surfaced by wait_* and checkpoint
                LOG.warning("coordinator failed: %s", e)
                self._error = e

    def _schedule_async(
        self,
        callable_: Callable[[], Any],
        handler: Callable[[Any, BaseException | None], None],
        initial_delay_s: float,
        period_s: float | None,
    ) -> None:
        def fire() -> None:
            if self._stop.is_set():
                return
            fut = self._pool.submit(callable_)

            def done(f: Future[Any]) -> None:
                err = f.exception()
                self._events.put(lambda: handler(None if err else f.result(), err))

            fut.add_done_callback(done)
            if period_s is not None:
                heapq.heappush(self._timers, _Timer(time.monotonic() + period_s, next(self._seq), fire))

        heapq.heappush(self._timers, _Timer(time.monotonic() + initial_delay_s, next(self._seq), fire))

    def _set_backlog(self, backlog: bool) -> None:
        changed = backlog != self._scheduler.processing_backlog
        self._scheduler.set_processing_backlog(backlog)
        if changed:
            LOG.info(
                "the source reports %s: periodic checkpoints every %s ms",
                "backlog" if backlog else "no backlog",
                self._scheduler.interval_ms(),
            )

    @property
    def processing_backlog(self) -> bool:
        """Whether the source reports backlog now (``set_is_processing_backlog``)."""
        return self._scheduler.processing_backlog

    # --- event time ---------------------------------------------------------------------------
    def _report_watermark(self, subtask: int, watermark: int, idle: bool) -> None:
        """From a reader thread: its watermark, for the alignment coordinator."""
        self._events.put(functools.partial(self._align, subtask, watermark, idle))

    def _align(self, subtask: int, watermark: int, idle: bool) -> None:
        alignment = self._alignment
        if alignment is None:
            return
        alignment.report(subtask, watermark, idle)
        for i, rt in self._readers.items():
            if rt.event_time is not None:
                allowed_by_others = alignment.max_allowed_watermark(excluding=i)
                rt.inbox.put(functools.partial(rt.event_time.apply_max_allowed, allowed_by_others))

    def reader_event_time(self, subtask: int) -> ReaderEventTime[T] | None:
        """A reader's watermarks and alignment state (``None`` without a watermark strategy)."""
        return self._readers[subtask].event_time

    def _handle_split_request(self, subtask: int) -> None:
        if self._enumerator is not None and subtask in self._registered:
            self._enumerator.handle_split_request(subtask, "localhost")

    def _assign(self, subtask: int, splits: list[SplitT]) -> None:
        rt = self._readers[subtask]
        rt.assigned_since_checkpoint.extend(splits)
        self._deliver(subtask, splits)

    def _deliver(self, subtask: int, splits: list[SplitT]) -> None:
        rt = self._readers[subtask]
        rt.inbox.put(lambda: rt.reader.add_splits(splits))

    def _no_more(self, subtask: int) -> None:
        self._no_more_splits.add(subtask)
        rt = self._readers[subtask]
        rt.inbox.put(rt.reader.notify_no_more_splits)

    def _on_coordinator(self, fn: Callable[[], Any], timeout: float = 60.0) -> Any:
        fut: Future[Any] = Future()

        def run() -> None:
            try:
                fut.set_result(fn())
            except BaseException as e:  # handed to the caller's future
                fut.set_exception(e)

        self._events.put(run)
        return fut.result(timeout=timeout)

    # --- checkpoints and failures -------------------------------------------------------------
    def checkpoint(self, timeout: float = 60.0) -> RuntimeCheckpoint:
        """Take a consistent checkpoint (and write it to ``checkpoint_path`` when set)."""
        take = functools.partial(self._take_checkpoint, timeout)
        return self._on_coordinator(take, timeout)  # type: ignore[no-any-return]

    def _take_checkpoint(self, timeout: float) -> RuntimeCheckpoint:
        """On the coordinator: snapshot every reader, then the enumerator."""
        self._checkpoint_id += 1
        cid = self._checkpoint_id
        serializer = self.source.split_serializer
        replies: dict[int, Future[list[SplitT]]] = {}
        for i, rt in self._readers.items():
            fut: Future[list[SplitT]] = Future()
            replies[i] = fut

            def snap(rt: _ReaderThread[T, SplitT] = rt, fut: Future[list[SplitT]] = fut) -> None:
                splits = rt.reader.snapshot_state(cid)
                rt.committed.extend(rt.output.pending)
                rt.output.pending = []
                rt.assigned_since_checkpoint = []
                rt.last_checkpoint_splits = list(splits)
                fut.set_result(splits)

            if rt.error is not None or not rt.thread.is_alive():
                snap()
            else:
                rt.inbox.put(snap)
        readers = {i: [serializer.serialize(s) for s in f.result(timeout)] for i, f in replies.items()}
        assert self._enumerator is not None
        enum_state = self.source.enumerator_checkpoint_serializer.serialize(
            self._enumerator.snapshot_state(cid)
        )
        ckpt = RuntimeCheckpoint(
            cid, enum_state, readers, self._committed_before_restore + len(self.committed())
        )
        if self.checkpoint_path:
            ckpt.save(self.checkpoint_path)
        self._enumerator.notify_checkpoint_complete(cid)
        for rt in self._readers.values():
            rt.inbox.put(functools.partial(rt.reader.notify_checkpoint_complete, cid))
        self._scheduler.checkpoint_taken()
        self.checkpoint_history.append((time.monotonic(), cid, self._scheduler.processing_backlog))
        return ckpt

    def fail_reader(self, subtask: int) -> None:
        """Simulate a reader failure: drop its uncommitted output, return its splits, start a new one."""

        def fail() -> None:
            old = self._readers[subtask]
            old.close(self.close_timeout_s)
            if self._alignment is not None:
                self._alignment.forget(subtask)
            back = list(old.last_checkpoint_splits) + list(old.assigned_since_checkpoint)
            committed = old.committed
            self._registered.discard(subtask)
            self._no_more_splits.discard(subtask)
            self._start_reader(subtask)
            self._readers[subtask].committed = committed
            self._readers[subtask].last_checkpoint_splits = []
            assert self._enumerator is not None
            if back:
                self._enumerator.add_splits_back(back, subtask)
            self._registered.add(subtask)
            self._enumerator.add_reader(subtask)

        self._on_coordinator(fail)

    # --- results ------------------------------------------------------------------------------
    def committed(self) -> list[Any]:
        """Records covered by completed checkpoints (this run only)."""
        return [r for rt in self._readers.values() for r in rt.committed]

    def records(self) -> list[Any]:
        """Committed plus pending records (call after the readers finished or stopped)."""
        return [r for rt in self._readers.values() for r in (*rt.committed, *rt.output.pending)]

    def record_count(self) -> int:
        """Approximate live count of emitted records (for waiting)."""
        return sum(len(rt.committed) + len(rt.output.pending) for rt in self._readers.values())

    def check_errors(self) -> None:
        """Raise the first reader or coordinator failure."""
        if self._error is not None:
            raise ConnectorError(f"the enumerator failed: {self._error}") from self._error
        for rt in self._readers.values():
            if rt.error is not None:
                raise ConnectorError(f"reader {rt.subtask} failed: {rt.error}") from rt.error

    def wait_finished(self, timeout: float = 60.0) -> list[Any]:
        """Wait until every reader reached END_OF_INPUT (bounded sources); return all records."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_errors()
            if all(rt.finished.is_set() for rt in self._readers.values()) and self._readers:
                self.check_errors()
                return self.records()
            time.sleep(0.02)
        raise TimeoutError(
            f"the source did not finish within {timeout}s ({self.record_count()} records so far)"
        )

    def wait_for_records(self, count: int, timeout: float = 60.0) -> None:
        """Wait until at least ``count`` records were emitted."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_errors()
            if self.record_count() >= count:
                return
            time.sleep(0.01)
        raise TimeoutError(f"only {self.record_count()} of {count} records within {timeout}s")
