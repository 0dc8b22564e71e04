"""``SplitFetcher``: one thread that runs a ``SplitReader`` and hands its records to the queue."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from connector_base.fetcher.split_fetcher_task import (
    AddSplitsTask,
    FetchTask,
    PauseOrResumeSplitsTask,
    RemoveSplitsTask,
    SplitFetcherTask,
)
from connector_base.records_with_split_ids import RecordsWithSplitIds
from connector_base.split import SourceSplit
from connector_base.split_reader import SplitReader
from connector_base.synchronization import FutureCompletingBlockingQueue

__all__ = ["SplitFetcher"]

LOG = logging.getLogger(__name__)

SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""


class SplitFetcher(Generic[SplitT]):
    """Runs one ``SplitReader`` on its own thread.

    Threading: the fetcher thread runs queued tasks (add/remove/pause splits) first, then fetch
    tasks while it has splits that are not paused; with none it sleeps until a task arrives.
    Other threads only enqueue tasks, wake it up and shut it down. A failure on the fetcher
    thread is reported through ``on_error`` (the manager stores it and the task thread re-raises
    it); the thread then ends.
    """

    def __init__(
        self,
        fetcher_id: int,
        queue: FutureCompletingBlockingQueue[RecordsWithSplitIds[Any]],
        split_reader: SplitReader[Any, SplitT],
        on_error: Callable[[BaseException], None],
        on_idle: Callable[[SplitFetcher[SplitT]], None] | None = None,
        allow_unaligned: bool = False,
    ) -> None:
        self.fetcher_id = fetcher_id
        self._queue = queue
        self._reader = split_reader
        self._on_error = on_error
        self._on_idle = on_idle
        self._assigned: dict[str, SplitT] = {}
        self._paused: set[str] = set()
        self._allow_unaligned = allow_unaligned
        self._tasks: deque[SplitFetcherTask] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._running_task: SplitFetcherTask | None = None
        self._fetch_task: FetchTask[SplitT] = FetchTask(
            split_reader,
            put=lambda r: queue.put(fetcher_id, r),
            on_finished=self._finished,
            wake_up_put=lambda: queue.wake_up_puts(fetcher_id),
        )
        self._thread = threading.Thread(target=self._run, name=f"split-fetcher-{fetcher_id}", daemon=True)

    def start(self) -> None:
        """Start the fetcher thread."""
        self._thread.start()

    @property
    def split_count(self) -> int:
        """How many splits this fetcher reads now."""
        with self._cond:
            return len(self._assigned) + sum(
                len(t._splits) for t in self._tasks if isinstance(t, AddSplitsTask)
            )

    def is_idle(self) -> bool:
        """Whether the fetcher has no splits and no tasks."""
        with self._cond:
            return not self._assigned and not self._tasks and self._running_task is None

    def add_splits(self, splits: Sequence[SplitT]) -> None:
        """Enqueue new splits (any thread)."""
        self._enqueue(AddSplitsTask(self._reader, splits, self._assigned))

    def remove_splits(self, splits: Sequence[SplitT]) -> None:
        """Enqueue a removal (any thread)."""
        self._enqueue(RemoveSplitsTask(self._reader, splits, self._assigned, self._paused))

    def pause_or_resume_splits(self, pause: Sequence[SplitT], resume: Sequence[SplitT]) -> None:
        """Enqueue a pause/resume (any thread)."""
        self._enqueue(
            PauseOrResumeSplitsTask(
                self._reader, pause, resume, self._assigned, self._paused, self._allow_unaligned
            )
        )

    def _enqueue(self, task: SplitFetcherTask) -> None:
        with self._cond:
            self._tasks.append(task)
            running = self._running_task
            self._cond.notify_all()
        if running is not None:
            running.wake_up()

    def _finished(self, split_ids: set[str]) -> None:
        with self._cond:
            for sid in split_ids:
                self._assigned.pop(sid, None)
                self._paused.discard(sid)

    def shutdown(self) -> None:
        """Ask the thread to stop (any thread); it closes the split reader on its way out."""
        with self._cond:
            self._closed = True
            running = self._running_task
            self._cond.notify_all()
        if running is not None:
            running.wake_up()
        else:
            self._queue.wake_up_puts(self.fetcher_id)

    def join(self, timeout: float) -> bool:
        """Wait for the thread to end; ``True`` if it did."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _next_task(self) -> SplitFetcherTask | None:
        with self._cond:
            while True:
                if self._closed:
                    return None
                if self._tasks:
                    task = self._tasks.popleft()
                elif self._assigned and not self._paused.issuperset(self._assigned):
                    task = self._fetch_task
                else:
                    if self._on_idle is not None and not self._assigned:
                        self._cond.release()
                        try:
                            self._on_idle(self)
                        finally:
                            self._cond.acquire()
                        if self._tasks or self._assigned or self._closed:
                            continue
                    self._cond.wait()
                    continue
                self._running_task = task
                return task

    def _run(self) -> None:
        try:
            while True:
                task = self._next_task()
                if task is None:
                    break
                try:
                    done = task.run()
                finally:
                    with self._cond:
                        self._running_task = None
                if not done and task is not self._fetch_task:
                    with self._cond:
                        self._tasks.appendleft(task)
        except BaseException as e:  # every failure must reach the task thread
            LOG.debug("split fetcher %d failed", self.fetcher_id, exc_info=True)
            self._on_error(e)
        finally:
            try:
                self._reader.close()
            except Exception:
                LOG.warning("closing the split reader of fetcher %d failed", self.fetcher_id, exc_info=True)
            self._queue.notify_available()
