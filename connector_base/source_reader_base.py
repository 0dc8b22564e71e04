"""``SourceReaderBase``: a ``SourceReader`` built from fetcher threads, a hand-off queue and an emitter."""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

from connector_base.fetcher.split_fetcher_manager import (
    MultiThreadFetcherManager,
    SingleThreadFetcherManager,
    SplitFetcherManager,
)
from connector_base.record_emitter import RecordEmitter
from connector_base.source_output import (
    EventTimeReaderOutput,
    PlainSourceOutput,
    SourceOutput,
    SplitLocalOutput,
)
from connector_base.source_reader import InputStatus, ReaderOutput, SourceReader, SourceReaderContext
from connector_base.split import SourceSplit
from connector_base.split_reader import ALLOW_UNALIGNED_SOURCE_SPLITS_KEY, SplitReader
from connector_base.synchronization.future_completing_blocking_queue import FutureCompletingBlockingQueue

__all__ = ["SourceReaderBase", "SingleThreadMultiplexSourceReaderBase", "BatchEmitter"]

LOG = logging.getLogger(__name__)

E = TypeVar("E")
"""The element type of the split reader."""
T = TypeVar("T")
"""The output record type."""
SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type (immutable, checkpointed)."""
SplitStateT = TypeVar("SplitStateT")
"""The split state (mutable, only inside the reader)."""

QUEUE_CAPACITY_KEY = "source.reader.element.queue.capacity"
CLOSE_TIMEOUT_KEY = "source.reader.close.timeout.s"


class BatchEmitter(RecordEmitter[E, T, SplitStateT]):
    """An emitter that may take all the records of one split from one fetch in a single call.

    Override ``emit_records`` for throughput (for example to append a whole Arrow batch); the
    default calls ``emit_record`` per element.
    """

    def emit_records(self, elements: Iterable[E], output: SourceOutput[T], split_state: SplitStateT) -> None:
        """Emit every element of one split, in order, and advance the state past the last one."""
        emit = self.emit_record
        for e in elements:
            emit(e, output, split_state)


class SourceReaderBase(SourceReader[T, SplitT], Generic[E, T, SplitT, SplitStateT]):
    """The FLIP-27 reader base: fetchers read, the queue hands off, the emitter emits.

    Subclasses say how a split becomes a mutable state (``_initialized_state``), how a state becomes
    a split again for checkpoints (``_to_split_type``), and what to do when splits finish.

    Threading: ``poll_next`` and the other ``SourceReader`` methods run on the task thread;
    fetching happens on the fetcher threads owned by the ``SplitFetcherManager``. Records cross
    between them only through the bounded ``FutureCompletingBlockingQueue`` (capacity from the
    ``source.reader.element.queue.capacity`` config key), which is the back-pressure.

    Event time: when the runtime's output is an ``EventTimeReaderOutput``, every split gets its
    own split-local output (``create_output_for_split`` when the split is added, released when
    it finishes); its records, the split reader's caught-up reports and pauses go there.
    Otherwise emitters write to the runtime's output and timestamps are dropped.
    """

    def __init__(
        self,
        fetcher_manager: SplitFetcherManager[SplitT],
        record_emitter: RecordEmitter[E, T, SplitStateT],
        context: SourceReaderContext,
    ) -> None:
        self._fetcher_manager = fetcher_manager
        allow = str(context.config.get(ALLOW_UNALIGNED_SOURCE_SPLITS_KEY, "false")).lower() == "true"
        fetcher_manager.allow_unaligned_source_splits = allow
        self._queue = fetcher_manager.queue
        self._emitter = record_emitter
        self._emit_many: Callable[[Iterable[E], SourceOutput[T], SplitStateT], None] | None = (
            record_emitter.emit_records if isinstance(record_emitter, BatchEmitter) else None
        )
        self._context = context
        self._states: dict[str, SplitStateT] = {}
        self._no_more_splits = False
        self._closed = False
        self._runtime_output: ReaderOutput[T] | None = None
        self._event_time_output: EventTimeReaderOutput[T] | None = None
        self._plain_output: PlainSourceOutput[T] | None = None
        self._split_outputs: dict[str, SplitLocalOutput[T]] = {}
        self._outputs_missing = False
        self._paused: set[str] = set()

    @property
    def context(self) -> SourceReaderContext:
        """The reader context."""
        return self._context

    def start(self) -> None:
        """Nothing to start: fetchers start with the first split. Asks for a split if none yet."""
        if not self._states:
            self._context.send_split_request()

    def poll_next(self, output: ReaderOutput[T]) -> InputStatus:
        """Emit the records of one fetch (never blocks)."""
        if output is not self._runtime_output:
            self._use_output(output)
        if self._outputs_missing:
            self._create_split_outputs()
        records = self._queue.poll()
        if records is None:
            return self._finished_or_available()
        emit_many = self._emit_many
        emit_one = self._emitter.emit_record
        states = self._states
        outputs = self._split_outputs
        plain = self._plain_output
        while (split_id := records.next_split()) is not None:
            state = states.get(split_id)
            if state is None:
                LOG.debug("dropping records of split %s, which is no longer assigned", split_id)
                continue
            split_output: SourceOutput[T] = plain if plain is not None else outputs[split_id]
            elements = records.records_of_current_split()
            if emit_many is not None:
                emit_many(elements, split_output, state)
            else:
                for element in elements:
                    emit_one(element, split_output, state)
        caught_up = records.caught_up_status()
        if caught_up and plain is None:
            for split_id, flag in caught_up.items():
                local = outputs.get(split_id)
                if local is not None:
                    local.set_caught_up(flag)
        finished_ids = records.finished_splits()
        if finished_ids:
            finished = {sid: states.pop(sid) for sid in finished_ids if sid in states}
            if finished:
                self._release_split_outputs(finished)
                self._on_split_finished(finished)
                if not self._no_more_splits:
                    self._context.send_split_request()
        records.recycle()
        return InputStatus.MORE_AVAILABLE

    def _use_output(self, output: ReaderOutput[T]) -> None:
        """A (new) runtime output: per-split outputs if it tracks event time, else one plain one."""
        if self._event_time_output is not None:
            for split_id in list(self._split_outputs):
                self._event_time_output.release_output_for_split(split_id)
        self._split_outputs = {}
        self._runtime_output = output
        if isinstance(output, EventTimeReaderOutput):
            self._event_time_output = output
            self._plain_output = None
            self._outputs_missing = True
        else:
            self._event_time_output = None
            self._plain_output = PlainSourceOutput(output)
            self._outputs_missing = False

    def _create_split_outputs(self) -> None:
        self._outputs_missing = False
        factory = self._event_time_output
        if factory is None:
            return
        for split_id in self._states:
            if split_id not in self._split_outputs:
                local = factory.create_output_for_split(split_id)
                if split_id in self._paused:
                    local.set_paused(True)
                self._split_outputs[split_id] = local

    def _release_split_outputs(self, split_ids: Iterable[str]) -> None:
        for split_id in split_ids:
            self._paused.discard(split_id)
            if self._split_outputs.pop(split_id, None) is not None and self._event_time_output is not None:
                self._event_time_output.release_output_for_split(split_id)

    def _finished_or_available(self) -> InputStatus:
        self._queue.reset_available()  # before the checks, so a later notification is not lost
        self._fetcher_manager.check_errors()
        if not self._queue.is_empty():
            return InputStatus.MORE_AVAILABLE
        if self._no_more_splits and not self._states:
            return InputStatus.END_OF_INPUT
        return InputStatus.NOTHING_AVAILABLE

    def is_available(self) -> Future[None]:
        """Completes when a fetch is queued, a fetcher failed or ended, or input is over."""
        if self._no_more_splits and not self._states:
            done: Future[None] = Future()
            done.set_result(None)
            return done
        return self._queue.available_future()

    def add_splits(self, splits: Sequence[SplitT]) -> None:
        """Create split states and hand the splits to the fetchers."""
        if not splits:
            return
        for split in splits:
            self._states[split.split_id] = self._initialized_state(split)
        self._outputs_missing = self._event_time_output is not None
        self._fetcher_manager.add_splits(splits)

    def notify_no_more_splits(self) -> None:
        """Finish once the current splits are done."""
        self._no_more_splits = True
        self._queue.notify_available()

    def snapshot_state(self, checkpoint_id: int) -> list[SplitT]:
        """The unfinished splits, positioned after the last emitted record."""
        return [self._to_split_type(sid, st) for sid, st in self._states.items()]

    def pause_or_resume_splits(self, splits_to_pause: Sequence[str], splits_to_resume: Sequence[str]) -> None:
        """Pause and resume splits by id (watermark alignment); unknown ids are ignored.

        The fetchers stop fetching a paused split (its split reader must support pausing, see
        ``SplitReader.pause_or_resume_splits``); a paused split never goes idle.
        """
        states = self._states
        pause = [s for s in splits_to_pause if s in states and s not in self._paused]
        resume = [s for s in splits_to_resume if s in self._paused]
        if not pause and not resume:
            return
        self._paused.update(pause)
        self._paused.difference_update(resume)
        for split_id, flag in [*((s, True) for s in pause), *((s, False) for s in resume)]:
            local = self._split_outputs.get(split_id)
            if local is not None:
                local.set_paused(flag)
        self._fetcher_manager.pause_or_resume_splits(
            [self._to_split_type(s, states[s]) for s in pause],
            [self._to_split_type(s, states[s]) for s in resume if s in states],
        )

    @property
    def paused_splits(self) -> frozenset[str]:
        """The splits paused now."""
        return frozenset(self._paused)

    @property
    def split_states(self) -> Mapping[str, SplitStateT]:
        """The live split states (read-only view for subclasses and tests)."""
        return self._states

    def close(self) -> None:
        """Stop the fetcher threads within the configured timeout."""
        if self._closed:
            return
        self._closed = True
        timeout = float(self._context.config.get(CLOSE_TIMEOUT_KEY, 10.0))
        self._fetcher_manager.close(timeout)

    @abstractmethod
    def _initialized_state(self, split: SplitT) -> SplitStateT:
        """The mutable state of a newly added split."""

    @abstractmethod
    def _to_split_type(self, split_id: str, state: SplitStateT) -> SplitT:
        """An immutable split that resumes where ``state`` stands."""

    def _on_split_finished(self, finished: Mapping[str, SplitStateT]) -> None:
        """Splits reached their end (their records were all emitted)."""


class SingleThreadMultiplexSourceReaderBase(SourceReaderBase[E, T, SplitT, SplitStateT]):
    """A ``SourceReaderBase`` with a fetcher manager chosen from the context config.

    ``source.reader.fetchers`` = 1 (default) gives one fetcher thread whose split reader reads all
    splits; N > 1 gives up to N fetcher threads, each with its own split reader.
    """

    def __init__(
        self,
        split_reader_factory: Callable[[], SplitReader[E, SplitT]],
        record_emitter: RecordEmitter[E, T, SplitStateT],
        context: SourceReaderContext,
    ) -> None:
        capacity = int(context.config.get(QUEUE_CAPACITY_KEY, 2))
        queue: FutureCompletingBlockingQueue[Any] = FutureCompletingBlockingQueue(capacity)
        fetchers = int(context.config.get("source.reader.fetchers", 1))
        manager: SplitFetcherManager[SplitT]
        if fetchers > 1:
            manager = MultiThreadFetcherManager(split_reader_factory, fetchers, queue)
        else:
            manager = SingleThreadFetcherManager(split_reader_factory, queue)
        super().__init__(manager, record_emitter, context)
