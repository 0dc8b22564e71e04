"""``SplitReader``: the blocking, single-threaded fetch loop body a connector implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from connector_base.errors import UnsupportedOperationError
from connector_base.records_with_split_ids import RecordsWithSplitIds
from connector_base.split import SourceSplit

__all__ = [
    "ALLOW_UNALIGNED_SOURCE_SPLITS_KEY",
    "SplitReader",
    "SplitsAddition",
    "SplitsChange",
    "SplitsRemoval",
]

ALLOW_UNALIGNED_SOURCE_SPLITS_KEY = "pipeline.watermark-alignment.allow-unaligned-source-splits"
"""Reader configuration key: when true, a split reader that cannot pause splits is left unaligned."""

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

    def pause_or_resume_splits(
        self, splits_to_pause: Sequence[SplitT], splits_to_resume: Sequence[SplitT]
    ) -> None:
        """Stop fetching ``splits_to_pause`` and fetch ``splits_to_resume`` again (FLIP-217).

        Watermark alignment pauses splits that run ahead. A paused split keeps its position and
        its assignment; ``fetch`` returns no records of it until it is resumed. Splits this reader
        does not hold are ignored. The default raises ``UnsupportedOperationError``, as Flink's.
        """
        raise UnsupportedOperationError(
            f"{type(self).__name__} does not support pausing or resuming splits, which watermark "
            "alignment of splits needs; implement SplitReader.pause_or_resume_splits, or set "
            f"'{ALLOW_UNALIGNED_SOURCE_SPLITS_KEY}' to true in the reader configuration to align "
            "whole readers only"
        )

    @abstractmethod
    def close(self) -> None:
        """Release clients."""
