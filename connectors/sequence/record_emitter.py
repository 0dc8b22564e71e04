"""``SequenceRecordEmitter``: emits rows and advances the split state."""

from __future__ import annotations

from collections.abc import Iterable

from typing_extensions import override

from connector_base import BatchEmitter, ReaderOutput
from connectors.sequence.split import SequenceSplitState

Row = tuple[int, int, str]


class SequenceRecordEmitter(BatchEmitter[Row, Row, SequenceSplitState]):
    """Rows go out as they are; the state moves past the last one."""

    @override
    def emit_record(self, element: Row, output: ReaderOutput[Row], split_state: SequenceSplitState) -> None:
        output.collect(element)
        split_state.next_index = element[1] + 1

    @override
    def emit_records(
        self, elements: Iterable[Row], output: ReaderOutput[Row], split_state: SequenceSplitState
    ) -> None:
        last = None
        collect = output.collect
        for last in elements:
            collect(last)
        if last is not None:
            split_state.next_index = last[1] + 1
