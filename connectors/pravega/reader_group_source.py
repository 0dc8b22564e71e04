"""``PravegaReaderGroupSource``: FLIP-27's Pravega mapping, one split per reader of a reader group.

For the local runtime (long-lived readers, embedded use); Spark reads with segment splits (see
docs/pravega.md for why Spark refuses this mode). One stream; starts at ``start_stream_cut``
(``earliest``, ``latest`` or a stream cut); bounded with an ``end_stream_cut``. The group's
position is the readers' positions in the checkpoint (see ``PravegaReaderGroupEnumerator``): a
group with the same name starts again at the start cut unless restored from a checkpoint.
"""

from __future__ import annotations

from collections.abc import Iterable

from typing_extensions import override

from connector_base import (
    BatchEmitter,
    Boundedness,
    InvalidOptionError,
    SingleThreadMultiplexSourceReaderBase,
    Source,
    SourceReaderContext,
    SplitEnumeratorContext,
    VersionedSerializer,
)
from connector_base.source_output import SourceOutput
from connectors.pravega.options import PravegaSourceOptions, ReadMode
from connectors.pravega.reader_group_enumerator import (
    READER_GROUP_STATE_SERIALIZER,
    PravegaReaderGroupEnumerator,
    PravegaReaderGroupState,
)
from connectors.pravega.reader_group_split import (
    PravegaReaderGroupSplit,
    PravegaReaderGroupSplitSerializer,
    PravegaReaderGroupSplitState,
)
from connectors.pravega.reader_group_split_reader import PravegaReaderGroupSplitReader, ReaderGroupChunk
from connectors.pravega.split_reader import FETCH_BYTES, FETCH_BYTES_CONFIG

__all__ = ["PravegaReaderGroupSource"]


class _Emitter(BatchEmitter[ReaderGroupChunk, object, PravegaReaderGroupSplitState]):
    """Batches go out whole; the reader's position moves past them, or on to the successors."""

    @override
    def emit_record(
        self,
        element: ReaderGroupChunk,
        output: SourceOutput[object],
        split_state: PravegaReaderGroupSplitState,
    ) -> None:
        if element.batch is not None:
            output.collect_batch(element.batch)
        if element.successors is None:
            split_state.advance(element.segment_id, element.next_offset)
        else:
            split_state.finish(element.segment_id, element.successors)

    @override
    def emit_records(
        self,
        elements: Iterable[ReaderGroupChunk],
        output: SourceOutput[object],
        split_state: PravegaReaderGroupSplitState,
    ) -> None:
        for element in elements:
            self.emit_record(element, output, split_state)


class _Reader(
    SingleThreadMultiplexSourceReaderBase[
        ReaderGroupChunk, object, PravegaReaderGroupSplit, PravegaReaderGroupSplitState
    ]
):
    def _initialized_state(self, split: PravegaReaderGroupSplit) -> PravegaReaderGroupSplitState:
        return PravegaReaderGroupSplitState.from_split(split)

    def _to_split_type(self, split_id: str, state: PravegaReaderGroupSplitState) -> PravegaReaderGroupSplit:
        return state.to_split()


class PravegaReaderGroupSource(Source[object, PravegaReaderGroupSplit, PravegaReaderGroupState]):
    """See the module docstring. Options: ``mode=reader_group``, ``reader_group``, one ``stream``."""

    def __init__(self, options: PravegaSourceOptions) -> None:
        if options.mode is not ReadMode.READER_GROUP:
            raise InvalidOptionError("mode", options.mode.value, "reader_group for a reader-group source")
        if not options.reader_group:
            raise InvalidOptionError("reader_group", options.reader_group, "the reader group's name")
        if len(options.streams) != 1:
            raise InvalidOptionError("stream", ",".join("/".join(s) for s in options.streams), "one stream")
        self.options = options

    @property
    @override
    def boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED if self.options.bounded else Boundedness.CONTINUOUS_UNBOUNDED

    @override
    def create_enumerator(
        self, context: SplitEnumeratorContext[PravegaReaderGroupSplit]
    ) -> PravegaReaderGroupEnumerator:
        return PravegaReaderGroupEnumerator(context, self.options)

    @override
    def restore_enumerator(
        self, context: SplitEnumeratorContext[PravegaReaderGroupSplit], checkpoint: PravegaReaderGroupState
    ) -> PravegaReaderGroupEnumerator:
        return PravegaReaderGroupEnumerator(context, self.options, checkpoint)

    @override
    def create_reader(self, context: SourceReaderContext) -> _Reader:
        opts = self.options
        fetch = int(context.config.get(FETCH_BYTES_CONFIG, FETCH_BYTES))
        return _Reader(lambda: PravegaReaderGroupSplitReader(opts, fetch), _Emitter(), context)

    @property
    @override
    def split_serializer(self) -> VersionedSerializer[PravegaReaderGroupSplit]:
        return PravegaReaderGroupSplitSerializer()

    @property
    @override
    def enumerator_checkpoint_serializer(self) -> VersionedSerializer[PravegaReaderGroupState]:
        return READER_GROUP_STATE_SERIALIZER
