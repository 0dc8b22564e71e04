"""``RangeQuerySplitReader``: the ``SplitReader`` of a system that answers range queries.

A database table read by id, an object store listed by key, a log read by offset: when one query
"records of this split from position ``start``, below ``end``, at most ``limit``" is all a system
offers, this base does the rest of the ``SplitReader`` contract (positions per split, finishing
bounded splits, waiting briefly when nothing is new, ``wake_up``). Implement ``query`` and
``position_after``, plus ``split_range`` when the split is not a ``(start, end)`` pair of
attributes, and ``close``.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import override

from connector_base.records_with_split_ids import RecordsBySplits
from connector_base.split import SourceSplit
from connector_base.split_reader import SplitReader, SplitsAddition, SplitsChange

__all__ = ["RangeQuerySplitReader"]

E = TypeVar("E")
"""The record type ``query`` returns."""
SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""

IDLE_WAIT_S = 0.05


class RangeQuerySplitReader(SplitReader[E, SplitT], Generic[E, SplitT]):
    """Reads each split by repeated range queries of up to ``fetch_size`` records.

    A bounded split (``split_range`` gives an end) finishes when a query returns fewer records than
    asked or the position reaches the end: by the position contract (docs/tutorial-your-own-source.md)
    every record below an end already exists. An unbounded split is polled again on every fetch.

    Threading: everything runs on the fetcher thread except ``wake_up``, which only sets an event.
    """

    fetch_size = 1000
    """Records per query and split: smaller than a split, so checkpoints can fall inside one."""
    start_attribute = "start"
    """The split's attribute holding its first position (see ``split_range``)."""
    end_attribute = "end"
    """The split's attribute holding its exclusive end (see ``split_range``)."""

    def __init__(self) -> None:
        self._positions: dict[str, tuple[SplitT, Any, Any]] = {}  # id -> (split, next, end or None)
        self._wake = threading.Event()

    @abstractmethod
    def query(self, split: SplitT, start: Any, end: Any | None, limit: int) -> Sequence[E]:
        """Records of ``split`` at positions ``>= start`` and ``< end`` (``None``: no end), in
        position order, at most ``limit``. May block briefly; never starts threads."""

    @abstractmethod
    def position_after(self, record: E) -> Any:
        """The position right after ``record`` (where reading resumes)."""

    def split_range(self, split: SplitT) -> tuple[Any, Any | None]:
        """``(start, end)`` of a split; the default reads ``start_attribute`` and ``end_attribute``,
        with an end of ``None`` or a negative number meaning unbounded."""
        start, end = getattr(split, self.start_attribute), getattr(split, self.end_attribute, None)
        return start, (None if end is None or (isinstance(end, int) and end < 0) else end)

    @override
    def fetch(self) -> RecordsBySplits[E]:
        out: RecordsBySplits[E] = RecordsBySplits()
        produced = False
        for split_id, (split, start, end) in list(self._positions.items()):
            records = self.query(split, start, end, self.fetch_size) if end is None or start < end else ()
            if records:
                out.add_all(split_id, records)
                start = self.position_after(records[-1])
                self._positions[split_id] = (split, start, end)
                produced = True
            if end is not None and (len(records) < self.fetch_size or start >= end):
                out.add_finished_split(split_id)
                del self._positions[split_id]
        if not produced and not out.finished_splits():
            self._wake.wait(IDLE_WAIT_S)
            self._wake.clear()
        return out

    @override
    def handle_splits_changes(self, change: SplitsChange[SplitT]) -> None:
        for split in change.splits:
            if isinstance(change, SplitsAddition):
                self._positions[split.split_id] = (split, *self.split_range(split))
            else:
                self._positions.pop(split.split_id, None)

    @override
    def wake_up(self) -> None:
        self._wake.set()
