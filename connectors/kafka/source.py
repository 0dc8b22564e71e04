"""``KafkaSource``: the FLIP-27 source factory of ``kafka-unified``."""

from __future__ import annotations

from collections.abc import Callable

from typing_extensions import override

from connector_base import (
    Boundedness,
    SingleThreadMultiplexSourceReaderBase,
    Source,
    SourceReaderContext,
    SplitEnumeratorContext,
    VersionedSerializer,
)
from connectors.formats.record_decoder import RecordDecoder
from connectors.kafka.cluster_client import KafkaClusterClient
from connectors.kafka.enumerator import (
    ENUMERATOR_STATE_SERIALIZER,
    KafkaEnumeratorState,
    KafkaSourceEnumerator,
)
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.reachability import OutageClock
from connectors.kafka.reader_choice import KafkaReader
from connectors.kafka.record_emitter import KafkaRecordEmitter
from connectors.kafka.split import (
    KafkaPartitionSplit,
    KafkaPartitionSplitSerializer,
    KafkaPartitionSplitState,
)
from connectors.kafka.split_reader import KafkaPartitionSplitReader, KafkaRecords

__all__ = ["KafkaSource", "KafkaSourceReader"]


class KafkaSourceReader(
    SingleThreadMultiplexSourceReaderBase[KafkaRecords, object, KafkaPartitionSplit, KafkaPartitionSplitState]
):
    """The reader: split readers on fetcher threads, states are ``KafkaPartitionSplitState``."""

    def _initialized_state(self, split: KafkaPartitionSplit) -> KafkaPartitionSplitState:
        return KafkaPartitionSplitState.from_split(split)

    def _to_split_type(self, split_id: str, state: KafkaPartitionSplitState) -> KafkaPartitionSplit:
        return state.to_split()


class KafkaSource(Source[object, KafkaPartitionSplit, KafkaEnumeratorState]):
    """Bounded for batch queries (stopping offsets resolved at planning), unbounded for streaming."""

    def __init__(
        self, options: KafkaSourceOptions, decoder: Callable[[], RecordDecoder] | None = None
    ) -> None:
        self.options = options
        self._decoder = decoder  # keyFormat/valueFormat: builds the reader's decoder (executor side)
        self.outage = OutageClock(options)
        """The driver's outage clock, shared by the enumerator's discovery and the planner's lookups."""
        self._driver_client: KafkaClusterClient | None = None

    @property
    @override
    def boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED if self.options.ending is not None else Boundedness.CONTINUOUS_UNBOUNDED

    def driver_client(self) -> KafkaClusterClient:
        """The query's one driver client, shared by the planner and the enumerator's discovery, made
        on first use (a batch query's planning once opened three: one to make the first contact, one
        for the planner, one for the enumerator, each starting and connecting, 10-20 ms apiece).
        Both use it from the driver's stream-reader thread; either's ``close`` only releases its
        group consumer, which a later commit opens again."""
        if self._driver_client is None:
            self._driver_client = KafkaClusterClient(self.options)
        return self._driver_client

    @override
    def create_enumerator(
        self, context: SplitEnumeratorContext[KafkaPartitionSplit]
    ) -> KafkaSourceEnumerator:
        return KafkaSourceEnumerator(context, self.options, self.driver_client, outage=self.outage)

    @override
    def restore_enumerator(
        self, context: SplitEnumeratorContext[KafkaPartitionSplit], checkpoint: KafkaEnumeratorState
    ) -> KafkaSourceEnumerator:
        return KafkaSourceEnumerator(
            context, self.options, self.driver_client, checkpoint, outage=self.outage
        )

    @override
    def create_reader(self, context: SourceReaderContext) -> KafkaSourceReader:
        return KafkaSourceReader(*self.reader_parts(), context)

    def reader_parts(self) -> tuple[Callable[[], KafkaPartitionSplitReader], KafkaRecordEmitter]:
        """The split-reader factory and the emitter of ``kafka.reader`` (compiled or Python)."""
        opts = self.options
        decoder = self._decoder() if self._decoder else None
        if opts.reader is KafkaReader.NATIVE:
            from connectors.kafka.arrow_record_emitter import KafkaArrowRecordEmitter
            from connectors.kafka.native_split_reader import KafkaNativePartitionSplitReader

            return lambda: KafkaNativePartitionSplitReader(opts), KafkaArrowRecordEmitter(
                opts.include_headers, decoder
            )
        return lambda: KafkaPartitionSplitReader(opts), KafkaRecordEmitter(opts.include_headers, decoder)

    @property
    @override
    def split_serializer(self) -> VersionedSerializer[KafkaPartitionSplit]:
        return KafkaPartitionSplitSerializer()

    @property
    @override
    def enumerator_checkpoint_serializer(self) -> VersionedSerializer[KafkaEnumeratorState]:
        return ENUMERATOR_STATE_SERIALIZER

    @override
    def describe(self) -> dict[str, object]:
        return {"source": "kafka-unified", "options": repr(self.options)}
