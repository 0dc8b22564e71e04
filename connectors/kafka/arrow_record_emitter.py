"""``KafkaArrowRecordEmitter``: passes the compiled reader's Arrow batches on (``kafka.reader=native``).

The batches already are in Spark's Kafka schema (``record_emitter.arrow_schema``), so emitting is a
hand-off: a cast only where the query's schema differs, and the record timestamps for event time
read from the timestamp column without a copy.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa
from typing_extensions import override

from connector_base.source_output import SourceOutput
from connectors.kafka.native_split_reader import KafkaArrowRecords
from connectors.kafka.record_emitter import KafkaRecordEmitter
from connectors.kafka.split import KafkaPartitionSplitState

__all__ = ["KafkaArrowRecordEmitter"]

_TIMESTAMP_COLUMN = 5


class KafkaArrowRecordEmitter(KafkaRecordEmitter):
    """Emits ``KafkaArrowRecords`` (one Arrow batch per fetch and split) as they are."""

    @override
    def emit_record(
        self, element: Any, output: SourceOutput[Any], split_state: KafkaPartitionSplitState
    ) -> None:
        assert isinstance(element, KafkaArrowRecords)
        batch = element.batch
        target = getattr(output, "schema", None)
        stamps = batch.column(_TIMESTAMP_COLUMN).view(pa.int64()).to_numpy() // 1000
        if self._decoder is not None:  # keyFormat/valueFormat: as the Python reader's emitter
            batch, stamps = self._decode_raw(batch, stamps, element.topic, element.partition, target)
        elif target is not None and len(target) == batch.num_columns and not batch.schema.equals(target):
            batch = pa.RecordBatch.from_arrays(
                [
                    c if c.type == f.type else c.cast(f.type)
                    for c, f in zip(batch.columns, target, strict=True)
                ],
                schema=target,
            )
        output.collect_batch(batch, stamps)  # with the record timestamps (ms), for event time
        split_state.next_offset = element.last_offset + 1

    @override
    def emit_records(
        self, elements: Iterable[Any], output: SourceOutput[Any], split_state: KafkaPartitionSplitState
    ) -> None:
        for element in elements:
            self.emit_record(element, output, split_state)
