"""``RecordEmitter``: turns a split reader's element into output records and advances the split state."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Generic, TypeVar

from connector_base.source_output import SourceOutput

__all__ = ["RecordEmitter"]

E = TypeVar("E")
"""The element type from the split reader."""
T = TypeVar("T")
"""The output record type."""
SplitStateT = TypeVar("SplitStateT")
"""The mutable split state."""


class RecordEmitter(ABC, Generic[E, T, SplitStateT]):
    """Emits ``element`` to ``output`` and updates ``split_state`` so a checkpoint resumes after it.

    Called on the task thread only. ``output`` is the split's own output: pass the record's
    timestamp when the source has one (``collect(record, ts)``, ``collect_batch(batch, stamps)``),
    so event time can use it. For throughput, an element may be a whole batch (for example a
    ``pyarrow.RecordBatch``) that goes out with ``output.collect_batch``.
    """

    @abstractmethod
    def emit_record(self, element: E, output: SourceOutput[T], split_state: SplitStateT) -> None:
        """Emit one element and advance the state past it."""
