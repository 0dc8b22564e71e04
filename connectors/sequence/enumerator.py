"""``SequenceEnumerator``: assigns one split per partition, round-robin over readers."""

from __future__ import annotations

from collections.abc import Sequence

from typing_extensions import override

from connector_base import SplitEnumerator, SplitEnumeratorContext
from connector_base.serialization import FunctionSerializer
from connectors.sequence.split import UNBOUNDED, SequenceSplit


class SequenceEnumerator(SplitEnumerator[SequenceSplit, list[int]]):
    """Push-based: every partition is assigned once when readers register; state = assigned partitions."""

    def __init__(
        self,
        context: SplitEnumeratorContext[SequenceSplit],
        partitions: int,
        rows_per_partition: int | None,
        assigned: Sequence[int] = (),
    ) -> None:
        self._context = context
        self._partitions = partitions
        self._end = UNBOUNDED if rows_per_partition is None else rows_per_partition
        self._assigned = set(assigned)
        self._pending: list[SequenceSplit] = []

    @override
    def start(self) -> None:
        self._pending = [
            SequenceSplit(p, 0, self._end) for p in range(self._partitions) if p not in self._assigned
        ]

    @override
    def add_reader(self, subtask_id: int) -> None:
        self._assign()

    @override
    def handle_split_request(self, subtask_id: int, requester_hostname: str | None = None) -> None:
        self._assign()
        if not self._pending and self._end != UNBOUNDED:
            self._context.signal_no_more_splits(subtask_id)

    @override
    def add_splits_back(self, splits: Sequence[SequenceSplit], subtask_id: int) -> None:
        self._pending.extend(splits)
        self._assign()

    def _assign(self) -> None:
        readers = sorted(self._context.registered_readers())
        if not readers or not self._pending:
            return
        assignment: dict[int, list[SequenceSplit]] = {}
        for split in self._pending:
            assignment.setdefault(readers[split.partition % len(readers)], []).append(split)
            self._assigned.add(split.partition)
        self._pending = []
        self._context.assign_splits(assignment)
        if self._end != UNBOUNDED:
            for r in readers:
                self._context.signal_no_more_splits(r)

    @override
    def snapshot_state(self, checkpoint_id: int) -> list[int]:
        return sorted(self._assigned)


ENUMERATOR_STATE_SERIALIZER: FunctionSerializer[list[int]] = FunctionSerializer(
    1, lambda assigned: {"assigned": list(assigned)}, lambda data: [int(p) for p in data["assigned"]]
)
"""Version 1: ``{"assigned": [partition, ...]}``."""
