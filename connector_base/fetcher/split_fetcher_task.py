"""Tasks a ``SplitFetcher`` runs on its thread: fetch, add splits, remove splits, pause/resume."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from connector_base.records_with_split_ids import RecordsWithSplitIds
from connector_base.split import SourceSplit
from connector_base.split_reader import SplitReader, SplitsAddition, SplitsRemoval

__all__ = ["SplitFetcherTask", "FetchTask", "AddSplitsTask", "RemoveSplitsTask", "PauseOrResumeSplitsTask"]

SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""


class SplitFetcherTask(ABC):
    """A unit of work on a fetcher thread."""

    @abstractmethod
    def run(self) -> bool:
        """Run (may block); ``True`` when done, ``False`` when interrupted and to be run again."""

    def wake_up(self) -> None:  # noqa: B027
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

    def run(self) -> bool:  # noqa: D102
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

    def wake_up(self) -> None:  # noqa: D102
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

    def run(self) -> bool:  # noqa: D102
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
    ) -> None:
        self._reader = split_reader
        self._splits = list(splits)
        self._assigned = assigned

    def run(self) -> bool:  # noqa: D102
        for s in self._splits:
            self._assigned.pop(s.split_id, None)
        self._reader.handle_splits_changes(SplitsRemoval(self._splits))
        return True


class PauseOrResumeSplitsTask(SplitFetcherTask, Generic[SplitT]):
    """Pause and resume splits on the split reader."""

    def __init__(
        self, split_reader: SplitReader[Any, SplitT], pause: Sequence[SplitT], resume: Sequence[SplitT]
    ) -> None:
        self._reader = split_reader
        self._pause = list(pause)
        self._resume = list(resume)

    def run(self) -> bool:  # noqa: D102
        self._reader.pause_or_resume_splits(self._pause, self._resume)
        return True
