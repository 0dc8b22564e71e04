"""Fetcher managers: decide which fetcher thread reads which split, and own those threads."""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import override

from connector_base.errors import ReaderFailedError
from connector_base.fetcher.split_fetcher import SplitFetcher
from connector_base.records_with_split_ids import RecordsWithSplitIds
from connector_base.split import SourceSplit
from connector_base.split_reader import SplitReader
from connector_base.synchronization import FutureCompletingBlockingQueue

__all__ = ["SplitFetcherManager", "SingleThreadFetcherManager", "MultiThreadFetcherManager"]

LOG = logging.getLogger(__name__)

SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""

DEFAULT_CLOSE_TIMEOUT_S = 10.0


class SplitFetcherManager(ABC, Generic[SplitT]):
    """Owns the fetcher threads of one reader and the queue they feed.

    Threading: methods are called from the task thread; fetcher threads report failures through
    ``_on_error``, and ``check_errors`` re-raises the first one on the task thread, wrapped in
    ``ReaderFailedError`` with the original as its cause. ``close`` stops every thread within its
    timeout, or raises naming the threads that did not stop.
    """

    def __init__(
        self,
        split_reader_factory: Callable[[], SplitReader[Any, SplitT]],
        queue: FutureCompletingBlockingQueue[RecordsWithSplitIds[Any]] | None = None,
    ) -> None:
        self._factory = split_reader_factory
        self.queue: FutureCompletingBlockingQueue[RecordsWithSplitIds[Any]] = (
            queue if queue is not None else FutureCompletingBlockingQueue()
        )
        self._fetchers: dict[int, SplitFetcher[SplitT]] = {}
        self._next_id = 0
        self._error: BaseException | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.allow_unaligned_source_splits = False
        """Leave splits unpaused when their split reader cannot pause (set by the reader from config)."""

    @abstractmethod
    def add_splits(self, splits: Sequence[SplitT]) -> None:
        """Give new splits to fetchers."""

    def remove_splits(self, splits: Sequence[SplitT]) -> None:
        """Stop reading ``splits`` on every fetcher."""
        for f in list(self._fetchers.values()):
            f.remove_splits(splits)

    def pause_or_resume_splits(self, pause: Sequence[SplitT], resume: Sequence[SplitT]) -> None:
        """Pause and resume splits on the fetchers that hold them."""
        for f in list(self._fetchers.values()):
            f.pause_or_resume_splits(pause, resume)

    def _create_fetcher(self) -> SplitFetcher[SplitT]:
        if self._closed:
            raise ReaderFailedError("the fetcher manager is closed")
        fid = self._next_id
        self._next_id += 1
        fetcher: SplitFetcher[SplitT] = SplitFetcher(
            fid,
            self.queue,
            self._factory(),
            self._on_error,
            allow_unaligned=self.allow_unaligned_source_splits,
        )
        self._fetchers[fid] = fetcher
        fetcher.start()
        return fetcher

    def _on_error(self, error: BaseException) -> None:
        with self._lock:
            if self._error is None:
                self._error = error
        self.queue.notify_available()

    def check_errors(self) -> None:
        """Re-raise, on the calling thread, the first failure of a fetcher thread."""
        error = self._error
        if error is not None:
            raise ReaderFailedError(f"a split fetcher failed: {type(error).__name__}: {error}") from error

    @property
    def fetcher_count(self) -> int:
        """How many fetcher threads exist."""
        return len(self._fetchers)

    def close(self, timeout_s: float = DEFAULT_CLOSE_TIMEOUT_S) -> None:
        """Stop every fetcher thread, waiting at most ``timeout_s`` in total."""
        import time

        self._closed = True
        for f in self._fetchers.values():
            f.shutdown()
        deadline = time.monotonic() + timeout_s
        stuck = [
            f.fetcher_id for f in self._fetchers.values() if not f.join(max(0.0, deadline - time.monotonic()))
        ]
        if stuck:
            raise ReaderFailedError(f"split fetchers {stuck} did not stop within {timeout_s}s")


class SingleThreadFetcherManager(SplitFetcherManager[SplitT]):
    """One fetcher thread reads every split (a split reader that multiplexes, like Kafka's)."""

    @override
    def add_splits(self, splits: Sequence[SplitT]) -> None:
        fetcher = next(iter(self._fetchers.values()), None)
        if fetcher is None:
            fetcher = self._create_fetcher()
        fetcher.add_splits(splits)


class MultiThreadFetcherManager(SplitFetcherManager[SplitT]):
    """Up to ``num_fetchers`` threads, each with its own split reader; a new split goes to the least busy."""

    def __init__(
        self,
        split_reader_factory: Callable[[], SplitReader[Any, SplitT]],
        num_fetchers: int,
        queue: FutureCompletingBlockingQueue[RecordsWithSplitIds[Any]] | None = None,
    ) -> None:
        if num_fetchers < 1:
            raise ValueError(f"num_fetchers must be >= 1, got {num_fetchers}")
        super().__init__(split_reader_factory, queue)
        self._num_fetchers = num_fetchers

    @override
    def add_splits(self, splits: Sequence[SplitT]) -> None:
        for split in splits:
            if len(self._fetchers) < self._num_fetchers:
                target = self._create_fetcher()
            else:
                target = min(self._fetchers.values(), key=lambda f: f.split_count)
            target.add_splits([split])
