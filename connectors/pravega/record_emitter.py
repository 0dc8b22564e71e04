"""``PravegaRecordEmitter``: hands decoded Arrow batches to the output and advances the offset."""

from __future__ import annotations

from collections.abc import Iterable

from typing_extensions import override

from connector_base import BatchEmitter
from connector_base.source_output import SourceOutput
from connectors.pravega.split import PravegaSegmentSplitState
from connectors.pravega.split_reader import SegmentChunk

__all__ = ["PravegaRecordEmitter"]


class PravegaRecordEmitter(BatchEmitter[SegmentChunk, object, PravegaSegmentSplitState]):
    """Batches go out whole (``collect_batch``); the state moves past the last event of each.

    Pravega events have no timestamp of their own: none is passed, so event time comes from the
    strategy's timestamp assigner (a user column decoded from the event).
    """

    @override
    def emit_record(
        self, element: SegmentChunk, output: SourceOutput[object], split_state: PravegaSegmentSplitState
    ) -> None:
        output.collect_batch(element.batch)
        split_state.next_offset = element.next_offset

    @override
    def emit_records(
        self,
        elements: Iterable[SegmentChunk],
        output: SourceOutput[object],
        split_state: PravegaSegmentSplitState,
    ) -> None:
        for element in elements:
            output.collect_batch(element.batch)
            split_state.next_offset = element.next_offset
