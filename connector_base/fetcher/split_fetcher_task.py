"""Tasks a ``SplitFetcher`` runs on its thread: fetch, add splits, remove splits, pause/resume."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import override

from connector_base.errors import UnsupportedOperationError
from connector_base.records_with_split_ids import RecordsWithSplitIds
from connector_base.split import SourceSplit
from connector_base.split_reader import SplitReader, SplitsAddition, SplitsRemoval

__all__ = ["SplitFetcherTask", "FetchTask", "AddSplitsTask", "RemoveSplitsTask", "PauseOrResumeSplitsTask"]

LOG = logging.getLogger(__name__)

SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""


class SplitFetcherTask(ABC):
    """A unit of work on a fetcher thread."""

    @abstractmethod
    def run(self) -> bool:
        """Run (may block); ``True`` when done, ``False`` when interrupted and to be run again."""

    def wake_up(self) -> None:
        """Interrupt ``run`` from another thread."""


class FetchTask(SplitFetcherTask, Generic[SplitT]):
    """Fetch once from the split reader and hand the records to the queue.

    If the hand-off is interrupted (a wake-up while the queue is full) the fetched records are
    kept and handed off on the next run, so nothing is dropped or fetched twice.
    """

    def __init__(
        self,
        split_reader: SplitReader[Any, SplitT],
        put: Callable[[RecordsWithSplitIds[Any]], bool],
        on_finished: Callable[[set[str]], None],
        wake_up_put: Callable[[], None],
    ) -> None:
        self._reader = split_reader
        self._put = put
        self._on_finished = on_finished
        self._wake_up_put = wake_up_put
        self._pending: RecordsWithSplitIds[Any] | None = None

    @override
    def run(self) -> bool:
        # a fetch cut short by wake_up still returns real records: they are handed off, and the
        # fetcher then runs the task that caused the wake-up before fetching again
        if self._pending is None:
            self._pending = self._reader.fetch()
        records = self._pending
        finished = set(records.finished_splits())
        if self._put(records):
            self._pending = None
            if finished:
                self._on_finished(finished)
            return True
        return False

    @override
    def wake_up(self) -> None:
        self._reader.wake_up()
        self._wake_up_put()


class AddSplitsTask(SplitFetcherTask, Generic[SplitT]):
    """Give new splits to the split reader."""

    def __init__(
        self,
        split_reader: SplitReader[Any, SplitT],
        splits: Sequence[SplitT],
        assigned: dict[str, SplitT],
    ) -> None:
        self._reader = split_reader
        self._splits = list(splits)
        self._assigned = assigned

    @override
    def run(self) -> bool:
        for s in self._splits:
            self._assigned[s.split_id] = s
        self._reader.handle_splits_changes(SplitsAddition(self._splits))
        return True


class RemoveSplitsTask(SplitFetcherTask, Generic[SplitT]):
    """Tell the split reader to stop reading some splits."""

    def __init__(
        self,
        split_reader: SplitReader[Any, SplitT],
        splits: Sequence[SplitT],
        assigned: dict[str, SplitT],
        paused: set[str] | None = None,
    ) -> None:
        self._reader = split_reader
        self._splits = list(splits)
        self._assigned = assigned
        self._paused = paused if paused is not None else set()

    @override
    def run(self) -> bool:
        for s in self._splits:
            self._assigned.pop(s.split_id, None)
            self._paused.discard(s.split_id)
        self._reader.handle_splits_changes(SplitsRemoval(self._splits))
        return True


class PauseOrResumeSplitsTask(SplitFetcherTask, Generic[SplitT]):
    """Pause and resume this fetcher's splits on the split reader, and record which are paused.

    Splits the fetcher does not hold are left out. When the split reader cannot pause
    (``UnsupportedOperationError``) and ``allow_unaligned`` is set, the splits stay unpaused
    and a warning is logged once; otherwise the error fails the fetcher, as in Flink.
    """

    def __init__(
        self,
        split_reader: SplitReader[Any, SplitT],
        pause: Sequence[SplitT],
        resume: Sequence[SplitT],
        assigned: dict[str, SplitT],
        paused: set[str],
        allow_unaligned: bool = False,
    ) -> None:
        self._reader = split_reader
        self._pause = list(pause)
        self._resume = list(resume)
        self._assigned = assigned
        self._paused = paused
        self._allow_unaligned = allow_unaligned

    @override
    def run(self) -> bool:
        pause = [s for s in self._pause if s.split_id in self._assigned]
        resume = [s for s in self._resume if s.split_id in self._assigned]
        if not pause and not resume:
            return True
        try:
            self._reader.pause_or_resume_splits(pause, resume)
        except UnsupportedOperationError:
            if not self._allow_unaligned:
                raise
            LOG.warning("%s cannot pause splits: they stay unaligned", type(self._reader).__name__)
            return True
        self._paused.update(s.split_id for s in pause)
        self._paused.difference_update(s.split_id for s in resume)
        return True
