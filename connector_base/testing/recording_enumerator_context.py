"""``RecordingEnumeratorContext``: an enumerator context for unit tests that records what it is told."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from typing_extensions import override

from connector_base.enumerator import ReaderInfo, SplitEnumeratorContext
from connector_base.split import SourceSplit

__all__ = ["RecordingEnumeratorContext"]

SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""


class RecordingEnumeratorContext(SplitEnumeratorContext[SplitT]):
    """Records assignments, no-more-splits signals, async calls and backlog reports.

    Async calls are not run; a test runs them with ``run_async_calls``. Threading: single-threaded.
    """

    def __init__(self, parallelism: int = 1) -> None:
        self.parallelism = parallelism
        self.assigned: dict[int, list[SplitT]] = {}
        self.no_more_splits: set[int] = set()
        self.async_calls: list[tuple[Callable[[], Any], Callable[[Any, BaseException | None], None]]] = []
        self.backlog_reports: list[bool] = []
        """Every ``set_is_processing_backlog`` call, in order."""

    @property
    def processing_backlog(self) -> bool:
        """The last reported backlog status (False before any report)."""
        return self.backlog_reports[-1] if self.backlog_reports else False

    @override
    def current_parallelism(self) -> int:
        return self.parallelism

    @override
    def registered_readers(self) -> Mapping[int, ReaderInfo]:
        return {i: ReaderInfo(i) for i in range(self.parallelism)}

    @override
    def assign_splits(self, assignment: Mapping[int, Sequence[SplitT]]) -> None:
        for subtask, splits in assignment.items():
            self.assigned.setdefault(subtask, []).extend(splits)

    @override
    def signal_no_more_splits(self, subtask_id: int) -> None:
        self.no_more_splits.add(subtask_id)

    @override
    def call_async(
        self,
        callable_: Callable[[], Any],
        handler: Callable[[Any, BaseException | None], None],
        initial_delay_s: float = 0.0,
        period_s: float | None = None,
    ) -> None:
        self.async_calls.append((callable_, handler))

    def run_async_calls(self) -> None:
        """Run every recorded async call once and its handler with the result or the error."""
        for callable_, handler in list(self.async_calls):
            try:
                result, error = callable_(), None
            except Exception as e:  # the handler decides, as in the runtimes
                result, error = None, e
            handler(result, error)

    @override
    def set_is_processing_backlog(self, is_processing_backlog: bool) -> None:
        self.backlog_reports.append(is_processing_backlog)
