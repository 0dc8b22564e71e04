"""``SequenceRecordEmitter``: emits rows and advances the split state."""

from __future__ import annotations

from collections.abc import Iterable

from connector_base import BatchEmitter, ReaderOutput
from connectors.sequence.split import SequenceSplitState

Row = tuple[int, int, str]


class SequenceRecordEmitter(BatchEmitter[Row, Row, SequenceSplitState]):
    """Rows go out as they are; the state moves past the last one."""

    def emit_record(self, element: Row, output: ReaderOutput[Row], split_state: SequenceSplitState) -> None:  # noqa: D102
        output.collect(element)
        split_state.next_index = element[1] + 1

    def emit_records(  # noqa: D102
        self, elements: Iterable[Row], output: ReaderOutput[Row], split_state: SequenceSplitState
    ) -> None:
        last = None
        collect = output.collect
        for last in elements:
            collect(last)
        if last is not None:
            split_state.next_index = last[1] + 1
