"""``SequenceSource`` and its Spark ``SequencePlanner``."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from typing_extensions import override

from connector_base import (
    Boundedness,
    SingleThreadMultiplexSourceReaderBase,
    Source,
    SourceReaderContext,
    SplitEnumeratorContext,
    VersionedSerializer,
)
from connector_base.spark import Backlog, Position, SplitPlanner
from connectors.sequence.enumerator import ENUMERATOR_STATE_SERIALIZER, SequenceEnumerator
from connectors.sequence.options import SequenceOptions
from connectors.sequence.record_emitter import Row, SequenceRecordEmitter
from connectors.sequence.restore_check import check_sequence_restore
from connectors.sequence.split import UNBOUNDED, SequenceSplit, SequenceSplitSerializer, SequenceSplitState
from connectors.sequence.split_reader import (
    FETCH_BATCH,
    FETCH_BATCH_CONFIG,
    SequenceSplitReader,
    available_rows,
)


class SequenceSourceReader(
    SingleThreadMultiplexSourceReaderBase[Row, Row, SequenceSplit, SequenceSplitState]
):
    """The reader: one fetcher thread, states are ``SequenceSplitState``."""

    def _initialized_state(self, split: SequenceSplit) -> SequenceSplitState:
        return SequenceSplitState.from_split(split)

    def _to_split_type(self, split_id: str, state: SequenceSplitState) -> SequenceSplit:
        return state.to_split()


class SequenceSource(Source[Row, SequenceSplit, list[int]]):
    """The source: bounded with ``rowsPerPartition``, unbounded with ``continuous=true``."""

    def __init__(self, options: SequenceOptions) -> None:
        self.options = options

    @property
    @override
    def boundedness(self) -> Boundedness:
        return Boundedness.CONTINUOUS_UNBOUNDED if self.options.continuous else Boundedness.BOUNDED

    @override
    def create_enumerator(self, context: SplitEnumeratorContext[SequenceSplit]) -> SequenceEnumerator:
        rows = None if self.options.continuous else self.options.rows_per_partition
        return SequenceEnumerator(context, self.options.partitions, rows)

    @override
    def restore_enumerator(
        self, context: SplitEnumeratorContext[SequenceSplit], checkpoint: list[int]
    ) -> SequenceEnumerator:
        rows = None if self.options.continuous else self.options.rows_per_partition
        return SequenceEnumerator(context, self.options.partitions, rows, checkpoint)

    @override
    def create_reader(self, context: SourceReaderContext) -> SequenceSourceReader:
        opts = self.options
        batch = int(context.config.get(FETCH_BATCH_CONFIG, FETCH_BATCH))
        return SequenceSourceReader(
            lambda: SequenceSplitReader(opts.rows_per_second, opts.start_epoch_s, batch),
            SequenceRecordEmitter(),
            context,
        )

    @property
    @override
    def split_serializer(self) -> VersionedSerializer[SequenceSplit]:
        return SequenceSplitSerializer()

    @property
    @override
    def enumerator_checkpoint_serializer(self) -> VersionedSerializer[list[int]]:
        return ENUMERATOR_STATE_SERIALIZER


class SequencePlanner(SplitPlanner[SequenceSplit]):
    """Positions are row indexes; a continuous partition's end is what has appeared by now."""

    def __init__(self, options: SequenceOptions) -> None:
        self.options = options

    def check_restored(self, enumerator_state: list[int], splits: Mapping[str, SequenceSplit]) -> set[str]:
        """A restored offset must hold only partitions the options name (see restore_check)."""
        recorded = [*enumerator_state, *(s.partition for s in splits.values())]
        return check_sequence_restore(self.options.partitions, recorded)

    @override
    def start_position(self, split: SequenceSplit) -> Position:
        return split.start

    @override
    def end_positions(self, splits: Mapping[str, tuple[SequenceSplit, Position]]) -> dict[str, Position]:
        now = available_rows(self.options.rows_per_second, self.options.start_epoch_s, time.time())
        return {
            sid: (s.end if s.end != UNBOUNDED else max(int(pos), now)) for sid, (s, pos) in splits.items()
        }

    @override
    def backlog(self, split: SequenceSplit, start: Position, end: Position) -> Backlog:
        return Backlog(records=int(end) - int(start))

    @override
    def cut(
        self,
        split: SequenceSplit,
        start: Position,
        end: Position,
        max_records: int | None,
        max_bytes: int | None,
    ) -> Position:
        return int(end) if max_records is None else min(int(end), int(start) + max_records)

    @override
    def smallest_cut(self, split: SequenceSplit, start: Position, end: Position) -> Position:
        return min(int(end), int(start) + 1)

    @override
    def is_finished(self, split: SequenceSplit, position: Position) -> bool:
        return split.end != UNBOUNDED and int(position) >= split.end

    @override
    def range_splits(self, split: SequenceSplit, start: Position, end: Position) -> list[SequenceSplit]:
        return [SequenceSplit(split.partition, int(start), int(end))]


def describe(options: SequenceOptions) -> dict[str, Any]:
    """For logs."""
    return {"partitions": options.partitions, "continuous": options.continuous}
