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
from connector_base.source_reader import InputStatus, ReaderOutput, SourceReader, SourceReaderContext
from connector_base.split import SourceSplit
from connector_base.split_reader import SplitReader
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

    def emit_records(self, elements: Iterable[E], output: ReaderOutput[T], split_state: SplitStateT) -> None:
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
    """

    def __init__(
        self,
        fetcher_manager: SplitFetcherManager[SplitT],
        record_emitter: RecordEmitter[E, T, SplitStateT],
        context: SourceReaderContext,
    ) -> None:
        self._fetcher_manager = fetcher_manager
        self._queue = fetcher_manager.queue
        self._emitter = record_emitter
        self._emit_many: Callable[[Iterable[E], ReaderOutput[T], SplitStateT], None] | None = (
            record_emitter.emit_records if isinstance(record_emitter, BatchEmitter) else None
        )
        self._context = context
        self._states: dict[str, SplitStateT] = {}
        self._no_more_splits = False
        self._closed = False

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
        records = self._queue.poll()
        if records is None:
            return self._finished_or_available()
        emit_many = self._emit_many
        emit_one = self._emitter.emit_record
        states = self._states
        while (split_id := records.next_split()) is not None:
            state = states.get(split_id)
            if state is None:
                LOG.debug("dropping records of split %s, which is no longer assigned", split_id)
                continue
            elements = records.records_of_current_split()
            if emit_many is not None:
                emit_many(elements, output, state)
            else:
                for element in elements:
                    emit_one(element, output, state)
        finished_ids = records.finished_splits()
        if finished_ids:
            finished = {sid: states.pop(sid) for sid in finished_ids if sid in states}
            if finished:
                self._on_split_finished(finished)
                if not self._no_more_splits:
                    self._context.send_split_request()
        records.recycle()
        return InputStatus.MORE_AVAILABLE

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
        self._fetcher_manager.add_splits(splits)

    def notify_no_more_splits(self) -> None:
        """Finish once the current splits are done."""
        self._no_more_splits = True
        self._queue.notify_available()

    def snapshot_state(self, checkpoint_id: int) -> list[SplitT]:
        """The unfinished splits, positioned after the last emitted record."""
        return [self._to_split_type(sid, st) for sid, st in self._states.items()]

    def pause_or_resume_splits(self, pause: Sequence[str], resume: Sequence[str]) -> None:
        """Pause/resume splits by id."""
        states = self._states
        self._fetcher_manager.pause_or_resume_splits(
            [self._to_split_type(s, states[s]) for s in pause if s in states],
            [self._to_split_type(s, states[s]) for s in resume if s in states],
        )

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

    def _on_split_finished(self, finished: Mapping[str, SplitStateT]) -> None:  # noqa: B027
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
