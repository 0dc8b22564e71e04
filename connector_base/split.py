"""``SourceSplit``: the unit of work that an enumerator hands to readers."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Generic, TypeVar

__all__ = ["SourceSplit", "SplitStateT", "SplitT", "MutableSplitState"]


class SourceSplit(ABC):
    """A split: an immutable description of a piece of input and where reading it starts.

    Implementations are frozen dataclasses; they are what gets checkpointed. The position a reader
    has reached lives in a separate, mutable split state (see ``MutableSplitState``).
    """

    @property
    @abstractmethod
    def split_id(self) -> str:
        """A stable id, unique within one source."""


SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The immutable split type of a source."""

SplitStateT = TypeVar("SplitStateT")
"""The mutable per-split state a reader keeps while it reads a split."""


class MutableSplitState(ABC, Generic[SplitT]):
    """Optional base for mutable split states: converts back to an immutable split for checkpoints."""

    @abstractmethod
    def to_split(self) -> SplitT:
        """Return an immutable split that resumes reading exactly where this state stands."""
