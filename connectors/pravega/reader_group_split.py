"""``PravegaReaderGroupSplit``: one reader of a reader group and the positions of its segments.

FLIP-27's Pravega mapping: a split is a reader of the group. The split carries the reader's
segments with the offset after the last event the reader emitted (Pravega's reader position), so
a checkpoint of every reader's split is a stream cut of the group, and a split given back after a
failure is the reader going offline with its last position.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from typing_extensions import override

from connector_base import MutableSplitState, SourceSplit, VersionedSerializer
from connector_base.serialization import Json
from connectors.pravega.split import OPEN_END

__all__ = [
    "PravegaReaderGroupSplit",
    "PravegaReaderGroupSplitSerializer",
    "PravegaReaderGroupSplitState",
    "ReaderSegmentPosition",
]


@dataclass(frozen=True, slots=True)
class ReaderSegmentPosition:
    """A segment a reader owns: the next offset to read, where it ends, and its predecessors.

    ``end_offset`` is ``OPEN_END`` until the segment is sealed, or the end stream cut's offset.
    """

    segment_id: int
    offset: int
    end_offset: int = OPEN_END
    predecessors: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.segment_id < 0 or self.offset < 0:
            raise ValueError(f"segment_id and offset must be >= 0: {self}")
        if self.end_offset != OPEN_END and self.end_offset < self.offset:
            raise ValueError(f"end_offset must be >= offset or OPEN_END: {self}")


@dataclass(frozen=True, slots=True)
class PravegaReaderGroupSplit(SourceSplit):
    """Reader ``reader_index`` of reader group ``group`` in ``scope`` over ``stream``.

    ``positions`` are the segments the reader owns, sorted by segment id. ``end_cut`` is the
    group's end stream cut as ``(segment id, offset)`` pairs for a bounded read, ``None`` otherwise.
    """

    scope: str
    stream: str
    group: str
    reader_index: int
    positions: tuple[ReaderSegmentPosition, ...] = ()
    end_cut: tuple[tuple[int, int], ...] | None = None

    def __post_init__(self) -> None:
        if not self.scope or not self.stream or not self.group or self.reader_index < 0:
            raise ValueError(f"scope, stream and group must be set and reader_index >= 0: {self}")
        ids = [p.segment_id for p in self.positions]
        if len(set(ids)) != len(ids):
            raise ValueError(f"a segment appears twice in the positions of reader {self.reader_index}: {ids}")

    @property
    def split_id(self) -> str:
        """``rg/<scope>/<group>/<reader index>``."""
        return f"rg/{self.scope}/{self.group}/{self.reader_index}"

    @property
    def reader_name(self) -> str:
        """The name of the reader in the group."""
        return f"{self.group}-reader-{self.reader_index}"

    def with_positions(self, positions: Iterable[ReaderSegmentPosition]) -> PravegaReaderGroupSplit:
        """The same reader at other positions."""
        ordered = tuple(sorted(positions, key=lambda p: p.segment_id))
        return PravegaReaderGroupSplit(
            self.scope, self.stream, self.group, self.reader_index, ordered, self.end_cut
        )

    @property
    def is_bounded(self) -> bool:
        """Whether the group reads up to an end stream cut."""
        return self.end_cut is not None

    def end_offset(self, segment_id: int) -> int:
        """Where the group stops reading ``segment_id``: the end cut's offset or ``OPEN_END``."""
        return dict(self.end_cut or ()).get(segment_id, OPEN_END)


class PravegaReaderGroupSplitState(MutableSplitState[PravegaReaderGroupSplit]):
    """The reader's live positions, moved by the emitter as events are emitted."""

    def __init__(self, split: PravegaReaderGroupSplit) -> None:
        self.split = split
        self.positions = {p.segment_id: p for p in split.positions}

    @classmethod
    def from_split(cls, split: PravegaReaderGroupSplit) -> PravegaReaderGroupSplitState:
        """The state at the split's positions."""
        return cls(split)

    @override
    def to_split(self) -> PravegaReaderGroupSplit:
        """The reader at the positions of what it emitted."""
        return self.split.with_positions(self.positions.values())

    def advance(self, segment_id: int, offset: int) -> None:
        """Events of ``segment_id`` up to ``offset`` were emitted."""
        p = self.positions[segment_id]
        self.positions[segment_id] = ReaderSegmentPosition(segment_id, offset, p.end_offset, p.predecessors)

    def finish(self, segment_id: int, successors: Iterable[ReaderSegmentPosition]) -> None:
        """``segment_id`` was read to its end; the reader owns ``successors`` from now on."""
        del self.positions[segment_id]
        for s in successors:
            self.positions[s.segment_id] = s


class PravegaReaderGroupSplitSerializer(VersionedSerializer[PravegaReaderGroupSplit]):
    """Version 2: adds ``"p": [[segment id, offset, end offset, [predecessor, ...]], ...]`` and
    ``"e": [[segment id, offset], ...]`` or ``null`` (the end cut).

    Version 1 (``{"sc", "st", "g", "i"}``, the official client's reader whose position lived in the
    server's group) restores as a reader with no segments.
    """

    @property
    @override
    def version(self) -> int:
        return 2

    @override
    def to_json(self, value: PravegaReaderGroupSplit) -> Json:
        return {
            "sc": value.scope,
            "st": value.stream,
            "g": value.group,
            "i": value.reader_index,
            "p": [[p.segment_id, p.offset, p.end_offset, list(p.predecessors)] for p in value.positions],
            "e": None if value.end_cut is None else [[s, o] for s, o in value.end_cut],
        }

    @override
    def from_json(self, version: int, data: Json) -> PravegaReaderGroupSplit:
        match version:
            case 1 | 2:
                positions = tuple(
                    ReaderSegmentPosition(int(s), int(o), int(e), tuple(int(x) for x in pre))
                    for s, o, e, pre in (data["p"] if version == 2 else [])
                )
                end = data.get("e") if version == 2 else None
                end_cut = None if end is None else tuple((int(s), int(o)) for s, o in end)
                return PravegaReaderGroupSplit(
                    str(data["sc"]), str(data["st"]), str(data["g"]), int(data["i"]), positions, end_cut
                )
            case _:
                raise self.unsupported(version)
