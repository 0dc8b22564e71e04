"""``PravegaRecordEmitter``: hands decoded Arrow batches to the output and advances the offset."""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa
from typing_extensions import override

from connector_base import BatchEmitter
from connector_base.source_output import SourceOutput
from connectors.formats.record_decoder import RecordDecoder
from connectors.pravega.split import PravegaSegmentSplitState
from connectors.pravega.split_reader import SegmentChunk

__all__ = ["PravegaRecordEmitter"]


class PravegaRecordEmitter(BatchEmitter[SegmentChunk, object, PravegaSegmentSplitState]):
    """Batches go out whole (``collect_batch``); the state moves past the last event of each.

    Pravega events have no timestamp of their own: none is passed, so event time comes from the
    strategy's timestamp assigner (a user column decoded from the event).
    """

    def __init__(self, decoder: RecordDecoder | None = None) -> None:
        self._decoder = decoder  # valueFormat: the event decoded into typed columns

    def _batch(self, element: SegmentChunk, output: SourceOutput[object]) -> pa.RecordBatch:
        batch = element.batch
        if self._decoder is None or batch.num_rows == 0:
            return batch
        offsets = batch.column("offset").to_numpy()
        scope, stream, segment = (batch.column(c)[0] for c in ("scope", "stream", "segment_id"))
        where = f"stream {scope}/{stream}, segment {segment}"

        def locate(row: int) -> str:
            return f"{where}, offset {int(offsets[row])}"

        decoded, _kept = self._decoder.decode(batch, locate)
        target = getattr(output, "schema", None)
        if target is not None and decoded.schema != target and len(target) == decoded.num_columns:
            decoded = decoded.cast(target)
        return decoded

    @override
    def emit_record(
        self, element: SegmentChunk, output: SourceOutput[object], split_state: PravegaSegmentSplitState
    ) -> None:
        output.collect_batch(self._batch(element, output))
        split_state.next_offset = element.next_offset

    @override
    def emit_records(
        self,
        elements: Iterable[SegmentChunk],
        output: SourceOutput[object],
        split_state: PravegaSegmentSplitState,
    ) -> None:
        for element in elements:
            output.collect_batch(self._batch(element, output))
            split_state.next_offset = element.next_offset
