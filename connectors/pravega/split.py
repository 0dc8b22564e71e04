"""``PravegaSegmentSplit``: a byte range of one segment, with the segment's predecessors."""

from __future__ import annotations

from dataclasses import dataclass

from typing_extensions import override

from connector_base import MutableSplitState, SourceSplit, VersionedSerializer
from connector_base.serialization import Json

__all__ = [
    "OPEN_END",
    "PravegaSegmentSplit",
    "PravegaSegmentSplitSerializer",
    "PravegaSegmentSplitState",
    "segment_split_id",
]

OPEN_END = -1
"""``end_offset`` of a split read until its segment is sealed and read to its end."""


def segment_split_id(scope: str, stream: str, segment_id: int) -> str:
    """``scope/stream/segment id``."""
    return f"{scope}/{stream}/{segment_id}"


@dataclass(frozen=True, slots=True)
class PravegaSegmentSplit(SourceSplit):
    """Segment ``segment_id`` of ``scope/stream`` from ``start_offset`` to ``end_offset`` (exclusive).

    Offsets are byte offsets of event boundaries. ``end_offset`` is ``OPEN_END`` for a split that
    ends when its segment is sealed and read to the end. ``predecessors`` are the segment ids the
    segment succeeded in a scale: it is read only after all of them are finished, so the order of
    events per routing key holds across scaling.
    """

    scope: str
    stream: str
    segment_id: int
    start_offset: int
    end_offset: int = OPEN_END
    predecessors: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.scope or not self.stream:
            raise ValueError(f"scope and stream must not be empty: {self}")
        if self.segment_id < 0 or self.start_offset < 0:
            raise ValueError(f"segment_id and start_offset must be >= 0: {self}")
        if self.end_offset != OPEN_END and self.end_offset < self.start_offset:
            raise ValueError(f"end_offset must be >= start_offset or OPEN_END: {self}")

    @property
    def split_id(self) -> str:
        """``scope/stream/segment id``."""
        return segment_split_id(self.scope, self.stream, self.segment_id)

    @property
    def is_bounded(self) -> bool:
        """Whether the split has a fixed end offset."""
        return self.end_offset != OPEN_END

    @property
    def segment_name(self) -> str:
        """The qualified segment name ``scope/stream/<number>.#epoch.<epoch>``."""
        sid = self.segment_id
        return f"{self.scope}/{self.stream}/{sid & 0xFFFFFFFF}.#epoch.{sid >> 32}"

    def predecessor_ids(self) -> list[str]:
        """The split ids of the predecessors."""
        return [segment_split_id(self.scope, self.stream, p) for p in self.predecessors]


class PravegaSegmentSplitState(MutableSplitState[PravegaSegmentSplit]):
    """The next offset to read in a split (only inside the reader)."""

    __slots__ = ("split", "next_offset")

    def __init__(self, split: PravegaSegmentSplit) -> None:
        self.split = split
        self.next_offset = split.start_offset

    @classmethod
    def from_split(cls, split: PravegaSegmentSplit) -> PravegaSegmentSplitState:
        """The state at the split's start."""
        return cls(split)

    def to_split(self) -> PravegaSegmentSplit:
        """A split that resumes after the last emitted event."""
        s = self.split
        return PravegaSegmentSplit(
            s.scope, s.stream, s.segment_id, self.next_offset, s.end_offset, s.predecessors
        )


class PravegaSegmentSplitSerializer(VersionedSerializer[PravegaSegmentSplit]):
    """Version 1: ``{"sc": scope, "st": stream, "seg": id, "s": start, "e": end or -1, "pre": [ids]}``."""

    @property
    @override
    def version(self) -> int:
        return 1

    @override
    def to_json(self, value: PravegaSegmentSplit) -> Json:
        return {
            "sc": value.scope,
            "st": value.stream,
            "seg": value.segment_id,
            "s": value.start_offset,
            "e": value.end_offset,
            "pre": list(value.predecessors),
        }

    @override
    def from_json(self, version: int, data: Json) -> PravegaSegmentSplit:
        match version:
            case 1:
                return PravegaSegmentSplit(
                    str(data["sc"]),
                    str(data["st"]),
                    int(data["seg"]),
                    int(data["s"]),
                    int(data["e"]),
                    tuple(int(p) for p in data["pre"]),
                )
            case _:
                raise self.unsupported(version)
