"""``SplitEnumerator``: discovers splits and assigns them to readers (one instance per source)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from connector_base.split import SourceSplit

__all__ = ["SplitEnumerator", "SplitEnumeratorContext", "ReaderInfo"]

SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""
EnumStateT = TypeVar("EnumStateT")
"""The enumerator's checkpoint type."""
R = TypeVar("R")
"""The result type of an asynchronous call."""


class ReaderInfo:
    """What the enumerator knows of a registered reader."""

    __slots__ = ("subtask_id", "location")

    def __init__(self, subtask_id: int, location: str = "local") -> None:
        self.subtask_id = subtask_id
        self.location = location

    def __repr__(self) -> str:
        return f"ReaderInfo({self.subtask_id}, {self.location!r})"


class SplitEnumeratorContext(ABC, Generic[SplitT]):
    """The enumerator's view of its runtime (local runtime or the Spark driver)."""

    @abstractmethod
    def current_parallelism(self) -> int:
        """How many readers the source runs with."""

    @abstractmethod
    def registered_readers(self) -> Mapping[int, ReaderInfo]:
        """The readers that are registered now, by subtask id."""

    @abstractmethod
    def assign_splits(self, assignment: Mapping[int, Sequence[SplitT]]) -> None:
        """Hand splits to readers (subtask id -> splits)."""

    def assign_split(self, split: SplitT, subtask_id: int) -> None:
        """Hand one split to one reader."""
        self.assign_splits({subtask_id: [split]})

    @abstractmethod
    def signal_no_more_splits(self, subtask_id: int) -> None:
        """Tell a reader that it will get no more splits (bounded sources)."""

    @abstractmethod
    def call_async(
        self,
        callable_: Callable[[], R],
        handler: Callable[[R | None, BaseException | None], None],
        initial_delay_s: float = 0.0,
        period_s: float | None = None,
    ) -> None:
        """Run ``callable_`` off the enumerator's thread and ``handler(result, error)`` on it.

        With ``period_s`` the call repeats (periodic split discovery). The Spark driver runs due
        calls at the start of each ``latestOffset`` so a micro-batch plan sees a consistent state.
        """

    def run_in_coordinator_thread(self, action: Callable[[], Any]) -> None:
        """Run ``action`` on the enumerator's thread (default: at once)."""
        action()

    def set_is_processing_backlog(self, is_processing_backlog: bool) -> None:
        """Say whether the source is catching up on a backlog (FLIP-309); call it again when that changes.

        While any source of a job reports backlog, the local runtime checkpoints every
        ``checkpoint.interval-during-backlog`` (none when it is unset) instead of every
        ``checkpoint.interval``; the Spark bridge lets micro-batches grow to the ``backlog.*`` limits.
        The status holds until the enumerator changes it; a new enumerator starts not in backlog.
        The default ignores it (a runtime without checkpoint scheduling).
        """


class SplitEnumerator(ABC, Generic[SplitT, EnumStateT]):
    """Discovers splits and assigns them to readers.

    Threading: every method is called from one thread (the coordinator); work that blocks, such as
    listing a directory or asking a broker for partitions, goes through ``context.call_async``.
    """

    @abstractmethod
    def start(self) -> None:
        """Start discovery (typically schedules ``call_async`` work)."""

    @abstractmethod
    def handle_split_request(self, subtask_id: int, requester_hostname: str | None = None) -> None:
        """A reader asks for a split (pull-based sources)."""

    @abstractmethod
    def add_splits_back(self, splits: Sequence[SplitT], subtask_id: int) -> None:
        """Splits of a failed reader return, as of that reader's last checkpoint."""

    @abstractmethod
    def add_reader(self, subtask_id: int) -> None:
        """A reader registered (push-based sources assign here)."""

    @abstractmethod
    def snapshot_state(self, checkpoint_id: int) -> EnumStateT:
        """The enumerator's checkpoint: what it has discovered and not yet assigned, and what it has."""

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """A checkpoint completed (optional)."""

    def close(self) -> None:
        """Release resources."""
