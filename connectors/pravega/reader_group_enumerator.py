"""``PravegaReaderGroupEnumerator``: the reader group's coordinator, one split per reader.

On first start it resolves the start stream cut (and the end stream cut of a bounded read) with the
controller and segment-store clients and deals the segments of the start cut to the readers by
segment id; reader ``i`` goes to subtask ``i``. From then on the readers follow scaling themselves
(see ``PravegaReaderGroupSplitReader``).

The group's checkpoint is a stream cut taken at the runtime's barrier: every reader's split holds
the positions of what it emitted when the barrier reached it, and the enumerator's state holds the
readers not handed out yet; together they own every segment of the group once. Restoring resets the
group to that cut (the readers resume at their positions). A failed reader's split comes back with
its last checkpointed position (the reader going offline with its position) and goes to the new
reader of that subtask.

Threading: the coordinator thread; the cuts are resolved through ``call_async``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from typing_extensions import override

from connector_base import ConnectorError, SplitEnumerator, SplitEnumeratorContext, VersionedSerializer
from connector_base.serialization import Json
from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.options import PravegaSourceOptions
from connectors.pravega.positions import CutKind, StreamCutSpec
from connectors.pravega.reader_group_split import (
    PravegaReaderGroupSplit,
    PravegaReaderGroupSplitSerializer,
    ReaderSegmentPosition,
)
from connectors.pravega.split import OPEN_END

__all__ = [
    "READER_GROUP_STATE_SERIALIZER",
    "PravegaReaderGroupEnumerator",
    "PravegaReaderGroupState",
    "PravegaReaderGroupStateSerializer",
    "group_stream_cut",
]

LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PravegaReaderGroupState:
    """Whether the readers were created, and those not handed out (with their positions)."""

    initialized: bool = False
    unassigned: tuple[PravegaReaderGroupSplit, ...] = ()


def group_stream_cut(readers: Iterable[PravegaReaderGroupSplit]) -> dict[int, int]:
    """The group's position: segment id -> offset over every reader's segments."""
    return {p.segment_id: p.offset for r in readers for p in r.positions}


def _resolve(client: PravegaClusterClient, spec: StreamCutSpec, scope: str, stream: str) -> dict[int, int]:
    if spec.kind is CutKind.EARLIEST:
        return client.head(scope, stream)
    if spec.kind is CutKind.LATEST:
        return {
            s.segment_id: client.info(scope, stream, s.segment_id).tail
            for s in client.current_segments(scope, stream)
        }
    return dict(spec.cuts[(scope, stream)])


class PravegaReaderGroupEnumerator(SplitEnumerator[PravegaReaderGroupSplit, PravegaReaderGroupState]):
    """See the module docstring."""

    def __init__(
        self,
        context: SplitEnumeratorContext[PravegaReaderGroupSplit],
        options: PravegaSourceOptions,
        state: PravegaReaderGroupState | None = None,
    ) -> None:
        self._context = context
        self._options = options
        state = state or PravegaReaderGroupState()
        self._initialized = state.initialized
        self._pending: list[PravegaReaderGroupSplit] = list(state.unassigned)

    @override
    def start(self) -> None:
        if not self._initialized:
            self._context.call_async(self._create_readers, self._on_created)

    def _create_readers(self) -> list[PravegaReaderGroupSplit]:
        (scope, stream), group = self._options.streams[0], self._options.reader_group
        assert group is not None
        client = PravegaClusterClient(self._options.connection)
        try:
            if not client.stream_exists(scope, stream):
                raise ConnectorError(f"Pravega stream {scope}/{stream} does not exist")
            start = _resolve(client, self._options.start, scope, stream)
            end = _resolve(client, self._options.end, scope, stream) if self._options.bounded else None
        finally:
            client.close()
        end_cut = None if end is None else tuple(sorted(end.items()))
        parallelism = self._context.current_parallelism()
        dealt: list[list[ReaderSegmentPosition]] = [[] for _ in range(parallelism)]
        for i, (segment, offset) in enumerate(sorted(start.items())):
            stop = OPEN_END if end is None else end.get(segment, OPEN_END)
            if stop != OPEN_END and stop < offset:
                raise ConnectorError(
                    f"end_stream_cut is before start_stream_cut in segment {segment} of {scope}/{stream}: "
                    f"{stop} < {offset}"
                )
            dealt[i % parallelism].append(ReaderSegmentPosition(segment, offset, stop))
        return [
            PravegaReaderGroupSplit(scope, stream, group, i, tuple(positions), end_cut)
            for i, positions in enumerate(dealt)
        ]

    def _on_created(self, readers: list[PravegaReaderGroupSplit] | None, error: BaseException | None) -> None:
        if error is not None:
            raise error
        assert readers is not None
        self._initialized = True
        self._pending.extend(readers)
        LOG.info(
            "reader group %s: %d readers at %s",
            self._options.reader_group,
            len(readers),
            group_stream_cut(readers),
        )
        self._assign()

    def _assign(self) -> None:
        if not self._initialized:
            return
        registered = set(self._context.registered_readers())
        for split in list(self._pending):
            if split.reader_index in registered:
                self._pending.remove(split)
                self._context.assign_split(split, split.reader_index)
        if self._options.bounded:
            for subtask in registered:
                self._context.signal_no_more_splits(subtask)

    @override
    def add_reader(self, subtask_id: int) -> None:
        self._assign()

    @override
    def handle_split_request(self, subtask_id: int, requester_hostname: str | None = None) -> None:
        self._assign()

    @override
    def add_splits_back(self, splits: Sequence[PravegaReaderGroupSplit], subtask_id: int) -> None:
        LOG.info("readers %s offline at %s", [s.reader_name for s in splits], group_stream_cut(splits))
        self._pending.extend(splits)
        self._assign()

    @override
    def snapshot_state(self, checkpoint_id: int) -> PravegaReaderGroupState:
        return PravegaReaderGroupState(self._initialized, tuple(self._pending))


class PravegaReaderGroupStateSerializer(VersionedSerializer[PravegaReaderGroupState]):
    """Version 2: ``{"init": bool, "unassigned": [serialized split, ...]}``.

    Version 1 (``{"assigned": [reader index, ...]}``) came from the official client's group, whose
    positions lived in the server: it restores as a group not yet created (start again at the start cut).
    """

    _splits = PravegaReaderGroupSplitSerializer()

    @property
    @override
    def version(self) -> int:
        return 2

    @override
    def to_json(self, value: PravegaReaderGroupState) -> Json:
        return {
            "init": value.initialized,
            "unassigned": [self._splits.serialize(s) for s in value.unassigned],
        }

    @override
    def from_json(self, version: int, data: Json) -> PravegaReaderGroupState:
        match version:
            case 1:
                return PravegaReaderGroupState()
            case 2:
                unassigned = tuple(self._splits.deserialize(s) for s in data["unassigned"])
                return PravegaReaderGroupState(bool(data["init"]), unassigned)
            case _:
                raise self.unsupported(version)


READER_GROUP_STATE_SERIALIZER = PravegaReaderGroupStateSerializer()
"""The serializer of the enumerator's checkpoint."""
