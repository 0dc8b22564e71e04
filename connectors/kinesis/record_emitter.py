"""``KinesisRecordEmitter``: GetRecords pages become Arrow batches in bulk; the split state advances."""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa
import pyarrow.compute as pc
from typing_extensions import override

from connector_base import BatchEmitter
from connector_base.source_output import SourceOutput
from connectors.kinesis.deaggregation import KPL_MAGIC, deaggregate
from connectors.kinesis.positions import ShardPosition
from connectors.kinesis.split import KinesisShardSplitState
from connectors.kinesis.split_reader import ShardPage, timestamp_ms

__all__ = ["KinesisRecordEmitter", "arrow_schema", "COLUMNS", "SUB_SEQUENCE_COLUMN"]

COLUMNS = ("data", "streamName", "shardId", "sequenceNumber", "partitionKey", "approximateArrivalTimestamp")
SUB_SEQUENCE_COLUMN = "subSequenceNumber"
_TS = pa.timestamp("us", tz="UTC")


def arrow_schema(deaggregate_records: bool) -> pa.Schema:
    """The Arrow schema of the emitted batches."""
    fields = [
        pa.field("data", pa.binary()),
        pa.field("streamName", pa.string()),
        pa.field("shardId", pa.string()),
        pa.field("sequenceNumber", pa.string()),
        pa.field("partitionKey", pa.string()),
        pa.field("approximateArrivalTimestamp", _TS),
    ]
    if deaggregate_records:
        fields.append(pa.field(SUB_SEQUENCE_COLUMN, pa.int64()))
    return pa.schema(fields)


class KinesisRecordEmitter(BatchEmitter[ShardPage, pa.RecordBatch, KinesisShardSplitState]):
    """One Arrow batch per page: columns are built with one ``pa.array`` call each.

    With ``deaggregate`` KPL aggregated records become their user records, numbered by
    ``subSequenceNumber`` (0 for records that were not aggregated). Each record's
    ``ApproximateArrivalTimestamp`` goes to the output as its timestamp (event time by default).
    """

    def __init__(self, stream: str, deaggregate_records: bool = False) -> None:
        self._stream = stream
        self._deaggregate = deaggregate_records
        self._schema = arrow_schema(deaggregate_records)

    @override
    def emit_record(
        self, element: ShardPage, output: SourceOutput[pa.RecordBatch], split_state: KinesisShardSplitState
    ) -> None:
        if not element:
            return
        batch, arrival_ms = self.to_batch_and_timestamps(split_state.split.shard_id, element)
        output.collect_batch(batch, arrival_ms)
        split_state.position = ShardPosition.after_sequence_number(element[-1]["SequenceNumber"])

    @override
    def emit_records(
        self,
        elements: Iterable[ShardPage],
        output: SourceOutput[pa.RecordBatch],
        split_state: KinesisShardSplitState,
    ) -> None:
        for page in elements:
            self.emit_record(page, output, split_state)

    def to_batch(self, shard_id: str, page: ShardPage) -> pa.RecordBatch:
        """The Arrow batch of one page of records."""
        return self.to_batch_and_timestamps(shard_id, page)[0]

    def to_batch_and_timestamps(self, shard_id: str, page: ShardPage) -> tuple[pa.RecordBatch, list[int]]:
        """The Arrow batch of one page and each row's arrival time in epoch milliseconds."""
        data = [r["Data"] for r in page]
        keys = [r["PartitionKey"] for r in page]
        seqs = [r["SequenceNumber"] for r in page]
        ts_ms = [timestamp_ms(r["ApproximateArrivalTimestamp"]) for r in page]
        sub: list[int] | None = None
        if self._deaggregate and any(d[:4] == KPL_MAGIC for d in data):
            data, keys, seqs, ts_ms, sub = self._expand(data, keys, seqs, ts_ms)
        n = len(data)
        ts = pc.multiply(pa.array(ts_ms, pa.int64()), 1000).cast(_TS)
        columns = [
            pa.array(data, pa.binary()),
            pa.repeat(pa.scalar(self._stream, pa.string()), n),
            pa.repeat(pa.scalar(shard_id, pa.string()), n),
            pa.array(seqs, pa.string()),
            pa.array(keys, pa.string()),
            ts,
        ]
        if self._deaggregate:
            columns.append(pa.array(sub if sub is not None else [0] * n, pa.int64()))
        return pa.RecordBatch.from_arrays(columns, schema=self._schema), ts_ms

    @staticmethod
    def _expand(
        data: list[bytes], keys: list[str], seqs: list[str], ts_ms: list[int]
    ) -> tuple[list[bytes], list[str], list[str], list[int], list[int]]:
        out_d: list[bytes] = []
        out_k: list[str] = []
        out_s: list[str] = []
        out_t: list[int] = []
        out_sub: list[int] = []
        for d, k, s, t in zip(data, keys, seqs, ts_ms, strict=True):
            users = deaggregate(d, k)
            if users is None:
                users = [(d, k)]
            for i, (ud, uk) in enumerate(users):
                out_d.append(ud)
                out_k.append(uk)
                out_s.append(s)
                out_t.append(t)
                out_sub.append(i)
        return out_d, out_k, out_s, out_t, out_sub
