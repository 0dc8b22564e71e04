"""``PravegaSource``: the FLIP-27 source of ``format("pravega")`` with segment splits."""

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
from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.enumerator import (
    ENUMERATOR_STATE_SERIALIZER,
    PravegaEnumeratorState,
    PravegaSegmentEnumerator,
)
from connectors.pravega.options import PravegaSourceOptions
from connectors.pravega.record_emitter import PravegaRecordEmitter
from connectors.pravega.split import (
    PravegaSegmentSplit,
    PravegaSegmentSplitSerializer,
    PravegaSegmentSplitState,
)
from connectors.pravega.split_reader import (
    FETCH_BYTES,
    FETCH_BYTES_CONFIG,
    PravegaSegmentSplitReader,
    SegmentChunk,
)

__all__ = ["PravegaSource", "PravegaSourceReader"]


class PravegaSourceReader(
    SingleThreadMultiplexSourceReaderBase[SegmentChunk, object, PravegaSegmentSplit, PravegaSegmentSplitState]
):
    """The reader: split readers on fetcher threads, states are ``PravegaSegmentSplitState``."""

    def _initialized_state(self, split: PravegaSegmentSplit) -> PravegaSegmentSplitState:
        return PravegaSegmentSplitState.from_split(split)

    def _to_split_type(self, split_id: str, state: PravegaSegmentSplitState) -> PravegaSegmentSplit:
        return state.to_split()


class PravegaSource(Source[object, PravegaSegmentSplit, PravegaEnumeratorState]):
    """Bounded with an end stream cut (batch default: ``latest``), unbounded otherwise."""

    def __init__(
        self, options: PravegaSourceOptions, decoder: Callable[[], RecordDecoder] | None = None
    ) -> None:
        self.options = options
        self._decoder = decoder  # valueFormat: builds the reader's event decoder (executor side)

    @property
    @override
    def boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED if self.options.bounded else Boundedness.CONTINUOUS_UNBOUNDED

    def _client(self) -> PravegaClusterClient:
        return PravegaClusterClient(self.options.connection)

    @override
    def create_enumerator(
        self, context: SplitEnumeratorContext[PravegaSegmentSplit]
    ) -> PravegaSegmentEnumerator:
        return PravegaSegmentEnumerator(context, self.options, self._client)

    @override
    def restore_enumerator(
        self, context: SplitEnumeratorContext[PravegaSegmentSplit], checkpoint: PravegaEnumeratorState
    ) -> PravegaSegmentEnumerator:
        return PravegaSegmentEnumerator(context, self.options, self._client, checkpoint)

    @override
    def create_reader(self, context: SourceReaderContext) -> PravegaSourceReader:
        opts = self.options
        fetch = int(context.config.get(FETCH_BYTES_CONFIG, FETCH_BYTES))
        return PravegaSourceReader(
            lambda: PravegaSegmentSplitReader(opts, fetch),
            PravegaRecordEmitter(self._decoder() if self._decoder else None),
            context,
        )

    @property
    @override
    def split_serializer(self) -> VersionedSerializer[PravegaSegmentSplit]:
        return PravegaSegmentSplitSerializer()

    @property
    @override
    def enumerator_checkpoint_serializer(self) -> VersionedSerializer[PravegaEnumeratorState]:
        return ENUMERATOR_STATE_SERIALIZER

    @override
    def describe(self) -> dict[str, object]:
        return {"source": "pravega", "options": repr(self.options)}
