"""``PravegaReaderGroupSource``: FLIP-27's Pravega mapping, one split per reader of a reader group.

For the local runtime (long-lived readers, embedded use); Spark reads with segment splits because a
reader group cannot replay a micro-batch (no checkpoints, no end cut in the Python client).
Continuous only; one stream; starts at the head (``earliest``) or the tail (``latest``) when the
group is created, and continues where the group stands when it exists.
"""

from __future__ import annotations

from collections.abc import Iterable

from connector_base import (
    BatchEmitter,
    Boundedness,
    InvalidOptionError,
    ReaderOutput,
    SingleThreadMultiplexSourceReaderBase,
    Source,
    SourceReaderContext,
    SplitEnumeratorContext,
    VersionedSerializer,
)
from connectors.pravega.options import PravegaSourceOptions, ReadMode
from connectors.pravega.positions import CutKind
from connectors.pravega.reader_group_enumerator import (
    READER_GROUP_STATE_SERIALIZER,
    PravegaReaderGroupEnumerator,
)
from connectors.pravega.reader_group_split import PravegaReaderGroupSplit, PravegaReaderGroupSplitSerializer
from connectors.pravega.reader_group_split_reader import PravegaReaderGroupSplitReader
from connectors.pravega.split_reader import SegmentChunk

__all__ = ["PravegaReaderGroupSource"]


class _Emitter(BatchEmitter[SegmentChunk, object, PravegaReaderGroupSplit]):
    def emit_record(  # noqa: D102
        self, element: SegmentChunk, output: ReaderOutput[object], split_state: PravegaReaderGroupSplit
    ) -> None:
        output.collect_batch(element.batch)

    def emit_records(  # noqa: D102
        self,
        elements: Iterable[SegmentChunk],
        output: ReaderOutput[object],
        split_state: PravegaReaderGroupSplit,
    ) -> None:
        for element in elements:
            output.collect_batch(element.batch)


class _Reader(
    SingleThreadMultiplexSourceReaderBase[
        SegmentChunk, object, PravegaReaderGroupSplit, PravegaReaderGroupSplit
    ]
):
    def _initialized_state(self, split: PravegaReaderGroupSplit) -> PravegaReaderGroupSplit:
        return split

    def _to_split_type(self, split_id: str, state: PravegaReaderGroupSplit) -> PravegaReaderGroupSplit:
        return state


class PravegaReaderGroupSource(Source[object, PravegaReaderGroupSplit, list[int]]):
    """See the module docstring. Options: ``mode=reader_group``, ``reader_group``, one ``stream``."""

    def __init__(self, options: PravegaSourceOptions) -> None:
        if options.mode is not ReadMode.READER_GROUP:
            raise InvalidOptionError("mode", options.mode.value, "reader_group for a reader-group source")
        if not options.reader_group:
            raise InvalidOptionError("reader_group", options.reader_group, "the reader group's name")
        if len(options.streams) != 1:
            raise InvalidOptionError("stream", ",".join("/".join(s) for s in options.streams), "one stream")
        if options.start.kind not in (CutKind.EARLIEST, CutKind.LATEST):
            raise InvalidOptionError("start_stream_cut", str(options.start), "earliest or latest")
        if options.bounded:
            raise InvalidOptionError(
                "end_stream_cut", str(options.end), "unbounded (a reader group has no end)"
            )
        self.options = options

    @property
    def boundedness(self) -> Boundedness:  # noqa: D102
        return Boundedness.CONTINUOUS_UNBOUNDED

    def create_enumerator(  # noqa: D102
        self, context: SplitEnumeratorContext[PravegaReaderGroupSplit]
    ) -> PravegaReaderGroupEnumerator:
        return PravegaReaderGroupEnumerator(context, self.options)

    def restore_enumerator(  # noqa: D102
        self, context: SplitEnumeratorContext[PravegaReaderGroupSplit], checkpoint: list[int]
    ) -> PravegaReaderGroupEnumerator:
        return PravegaReaderGroupEnumerator(context, self.options, checkpoint)

    def create_reader(self, context: SourceReaderContext) -> _Reader:  # noqa: D102
        opts = self.options
        return _Reader(lambda: PravegaReaderGroupSplitReader(opts), _Emitter(), context)

    @property
    def split_serializer(self) -> VersionedSerializer[PravegaReaderGroupSplit]:  # noqa: D102
        return PravegaReaderGroupSplitSerializer()

    @property
    def enumerator_checkpoint_serializer(self) -> VersionedSerializer[list[int]]:  # noqa: D102
        return READER_GROUP_STATE_SERIALIZER
