"""``KinesisSource`` (the FLIP-27 factory) and its ``KinesisSourceReader``."""

from __future__ import annotations

import pyarrow as pa
from typing_extensions import override

from connector_base import (
    Boundedness,
    SingleThreadMultiplexSourceReaderBase,
    Source,
    SourceReaderContext,
    SplitEnumeratorContext,
    VersionedSerializer,
)
from connectors.kinesis.enumerator import (
    ENUMERATOR_STATE_SERIALIZER,
    KinesisEnumeratorState,
    KinesisShardEnumerator,
)
from connectors.kinesis.options import KinesisOptions
from connectors.kinesis.record_emitter import KinesisRecordEmitter
from connectors.kinesis.split import KinesisShardSplit, KinesisShardSplitSerializer, KinesisShardSplitState
from connectors.kinesis.split_reader import KinesisShardSplitReader, ShardPage

__all__ = ["KinesisSource", "KinesisSourceReader"]


class KinesisSourceReader(
    SingleThreadMultiplexSourceReaderBase[
        ShardPage, pa.RecordBatch, KinesisShardSplit, KinesisShardSplitState
    ]
):
    """The reader: fetcher threads run ``KinesisShardSplitReader``s, the emitter builds Arrow batches."""

    def _initialized_state(self, split: KinesisShardSplit) -> KinesisShardSplitState:
        return KinesisShardSplitState.from_split(split)

    def _to_split_type(self, split_id: str, state: KinesisShardSplitState) -> KinesisShardSplit:
        return state.to_split()


class KinesisSource(Source[pa.RecordBatch, KinesisShardSplit, KinesisEnumeratorState]):
    """Bounded: every shard up to a cut taken when the read starts (or ``endingTimestamp``)."""

    def __init__(self, options: KinesisOptions, bounded: bool) -> None:
        self.options = options
        self.bounded = bounded

    @property
    @override
    def boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED if self.bounded else Boundedness.CONTINUOUS_UNBOUNDED

    @override
    def create_enumerator(self, context: SplitEnumeratorContext[KinesisShardSplit]) -> KinesisShardEnumerator:
        return KinesisShardEnumerator(context, self.options, self.bounded)

    @override
    def restore_enumerator(
        self, context: SplitEnumeratorContext[KinesisShardSplit], checkpoint: KinesisEnumeratorState
    ) -> KinesisShardEnumerator:
        return KinesisShardEnumerator(context, self.options, self.bounded, checkpoint)

    @override
    def create_reader(self, context: SourceReaderContext) -> KinesisSourceReader:
        opts = self.options
        return KinesisSourceReader(
            lambda: KinesisShardSplitReader(opts),
            KinesisRecordEmitter(opts.stream, opts.deaggregate),
            context,
        )

    @property
    @override
    def split_serializer(self) -> VersionedSerializer[KinesisShardSplit]:
        return KinesisShardSplitSerializer()

    @property
    @override
    def enumerator_checkpoint_serializer(self) -> VersionedSerializer[KinesisEnumeratorState]:
        return ENUMERATOR_STATE_SERIALIZER

    @override
    def describe(self) -> dict[str, object]:
        return {"source": "kinesis-unified", "stream": self.options.stream, "bounded": self.bounded}
