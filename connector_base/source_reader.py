"""``SourceReader``: reads the splits assigned to it and emits records into a ``ReaderOutput``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, Protocol, TypeVar

from connector_base.split import SourceSplit

__all__ = ["InputStatus", "ReaderOutput", "SourceReader", "SourceReaderContext"]

T = TypeVar("T")
"""The record type."""
T_contra = TypeVar("T_contra", contravariant=True)
SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""


class InputStatus(Enum):
    """What ``poll_next`` reports."""

    MORE_AVAILABLE = "more_available"
    """Call ``poll_next`` again at once."""
    NOTHING_AVAILABLE = "nothing_available"
    """Wait on ``is_available()`` before calling again."""
    END_OF_INPUT = "end_of_input"
    """Every split is finished and no more will come."""


class ReaderOutput(Protocol[T_contra]):
    """Where a reader puts records: what a runtime hands ``poll_next``.

    A runtime that tracks event time hands an ``EventTimeReaderOutput`` (``source_output``),
    which also makes one output per split.
    """

    def collect(self, record: T_contra) -> None:
        """Emit one record."""

    def collect_batch(self, batch: Any) -> None:
        """Emit many records at once (for example a ``pyarrow.RecordBatch``) without a per-row call."""


@dataclass
class SourceReaderContext:
    """What a reader knows of its runtime."""

    subtask_id: int = 0
    parallelism: int = 1
    config: dict[str, Any] = field(default_factory=dict)
    split_requests: list[int] = field(default_factory=list)

    def send_split_request(self) -> None:
        """Ask the enumerator for a split (the runtime forwards it)."""
        self.split_requests.append(self.subtask_id)


class SourceReader(ABC, Generic[T, SplitT]):
    """Reads records from the splits assigned to it.

    Threading: all methods are called from one thread (the task thread). ``poll_next`` never
    blocks; when nothing is available it returns ``NOTHING_AVAILABLE`` and the caller waits on the
    future from ``is_available``.
    """

    @abstractmethod
    def start(self) -> None:
        """Start the reader (before any split arrives)."""

    @abstractmethod
    def poll_next(self, output: ReaderOutput[T]) -> InputStatus:
        """Emit what is available (at least one record when possible) and report the status."""

    @abstractmethod
    def is_available(self) -> Future[None]:
        """A future that completes when ``poll_next`` may make progress."""

    @abstractmethod
    def add_splits(self, splits: Sequence[SplitT]) -> None:
        """New splits to read."""

    @abstractmethod
    def notify_no_more_splits(self) -> None:
        """No more splits will be added; finish when the current ones are done."""

    @abstractmethod
    def snapshot_state(self, checkpoint_id: int) -> list[SplitT]:
        """The unfinished splits, each positioned after the last record emitted."""

    def pause_or_resume_splits(self, splits_to_pause: Sequence[str], splits_to_resume: Sequence[str]) -> None:
        """Pause and resume splits by id, for watermark alignment (FLIP-217); optional.

        The default raises ``UnsupportedOperationError``.
        """
        from connector_base.errors import UnsupportedOperationError

        raise UnsupportedOperationError(
            f"{type(self).__name__} does not support pausing or resuming splits, which watermark "
            "alignment of splits needs"
        )

    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        """A checkpoint completed (optional)."""

    @abstractmethod
    def close(self) -> None:
        """Stop reading and release every thread and client within a bounded time."""
