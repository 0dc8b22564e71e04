"""``RecordsWithSplitIds``: one fetch's worth of records, grouped by split, plus finished splits."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Generic, TypeVar

from typing_extensions import override

__all__ = ["RecordsWithSplitIds", "RecordsBySplits"]

_NO_REPORT: Mapping[str, bool] = MappingProxyType({})

E = TypeVar("E")
"""The element type a split reader produces (a record, or a batch of records)."""


class RecordsWithSplitIds(ABC, Generic[E]):
    """The result of ``SplitReader.fetch``: records by split and the splits that ended.

    Consumption protocol (one thread): ``next_split()`` moves to the next split with records and
    returns its id (``None`` when done), ``records_of_current_split()`` gives its records once.
    """

    @abstractmethod
    def next_split(self) -> str | None:
        """Advance to the next split with records; ``None`` when no more."""

    @abstractmethod
    def records_of_current_split(self) -> Iterable[E]:
        """The records of the current split, in order."""

    @abstractmethod
    def finished_splits(self) -> set[str]:
        """Splits that reached their end in this fetch (after the records above)."""

    def caught_up_status(self) -> Mapping[str, bool]:
        """For the splits this fetch reports on: whether each has read everything available now.

        A split at its head (the end of what its system holds) is "caught up"; only caught-up
        splits can go idle. Splits not reported keep their last status; a split reader that never
        reports leaves its splits not caught up, so they never go idle. Default: no report.
        """
        return _NO_REPORT

    def recycle(self) -> None:
        """Called when the records were fully consumed (buffer reuse hook)."""


class RecordsBySplits(RecordsWithSplitIds[E]):
    """A simple ``RecordsWithSplitIds`` over a dict of lists."""

    __slots__ = ("_by_split", "_finished", "_iter", "_current", "_caught_up")

    def __init__(self, by_split: dict[str, list[E]] | None = None, finished: Iterable[str] = ()) -> None:
        self._by_split: dict[str, list[E]] = by_split or {}
        self._finished = set(finished)
        self._iter: Iterator[str] | None = None
        self._current: str | None = None
        self._caught_up: dict[str, bool] | None = None

    def add(self, split_id: str, record: E) -> None:
        """Add one record of a split."""
        self._by_split.setdefault(split_id, []).append(record)

    def add_all(self, split_id: str, records: Iterable[E]) -> None:
        """Add records of a split."""
        self._by_split.setdefault(split_id, []).extend(records)

    def add_finished_split(self, split_id: str) -> None:
        """Mark a split finished."""
        self._finished.add(split_id)

    def set_caught_up(self, split_id: str, caught_up: bool = True) -> None:
        """Report whether a split has read everything available now (see ``caught_up_status``)."""
        if self._caught_up is None:
            self._caught_up = {}
        self._caught_up[split_id] = caught_up

    @override
    def caught_up_status(self) -> Mapping[str, bool]:
        return self._caught_up if self._caught_up is not None else _NO_REPORT

    @override
    def next_split(self) -> str | None:
        if self._iter is None:
            self._iter = iter([s for s, recs in self._by_split.items() if recs])
        self._current = next(self._iter, None)
        return self._current

    @override
    def records_of_current_split(self) -> Iterable[E]:
        if self._current is None:
            return ()
        return self._by_split[self._current]

    @override
    def finished_splits(self) -> set[str]:
        return self._finished

    def __repr__(self) -> str:
        sizes = {k: len(v) for k, v in self._by_split.items()}
        return f"RecordsBySplits({sizes}, finished={sorted(self._finished)})"
