"""``SplitReader``: the blocking, single-threaded fetch loop body a connector implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from connector_base.records_with_split_ids import RecordsWithSplitIds
from connector_base.split import SourceSplit

__all__ = ["SplitReader", "SplitsChange", "SplitsAddition", "SplitsRemoval"]

E = TypeVar("E")
"""The element type ``fetch`` returns."""
SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""


@dataclass(frozen=True, slots=True)
class SplitsChange(Generic[SplitT]):
    """A change of the splits a split reader reads."""

    splits: Sequence[SplitT]


@dataclass(frozen=True, slots=True)
class SplitsAddition(SplitsChange[SplitT]):
    """Start reading these splits."""


@dataclass(frozen=True, slots=True)
class SplitsRemoval(SplitsChange[SplitT]):
    """Stop reading these splits."""


class SplitReader(ABC, Generic[E, SplitT]):
    """Reads records from its splits; runs on one fetcher thread and never starts threads itself.

    Threading: ``fetch``, ``handle_splits_changes``, ``pause_or_resume_splits`` and ``close`` are
    called on the fetcher thread; ``wake_up`` is called from other threads and must make a blocked
    ``fetch`` return soon (possibly with no records).
    """

    @abstractmethod
    def fetch(self) -> RecordsWithSplitIds[E]:
        """Fetch the next records; may block, but returns promptly after ``wake_up``.

        A split that reached its end is reported in ``finished_splits()``.
        """

    @abstractmethod
    def handle_splits_changes(self, change: SplitsChange[SplitT]) -> None:
        """Apply a change of splits (additions, removals)."""

    @abstractmethod
    def wake_up(self) -> None:
        """Interrupt a blocking ``fetch`` (called from another thread)."""

    def pause_or_resume_splits(  # noqa: B027
        self, splits_to_pause: Sequence[SplitT], splits_to_resume: Sequence[SplitT]
    ) -> None:
        """Pause or resume reading some splits (watermark alignment); optional."""

    @abstractmethod
    def close(self) -> None:
        """Release clients."""
