"""``KinesisShardSplit``: one shard of a stream, from a start position up to an end cut."""

from __future__ import annotations

from dataclasses import dataclass

from typing_extensions import override

from connector_base import SourceSplit, VersionedSerializer
from connector_base.serialization import Json
from connectors.kinesis.positions import PositionKind, ShardPosition

__all__ = ["KinesisShardSplit", "KinesisShardSplitState", "KinesisShardSplitSerializer"]


@dataclass(frozen=True, slots=True)
class KinesisShardSplit(SourceSplit):
    """Shard ``shard_id`` of ``stream`` from ``start`` up to ``end`` (exclusive; ``None``: no end).

    ``parent_shard_ids`` are the shards this one was split or merged from: a child is read only
    after every parent is finished, so order per partition key holds across resharding. ``closed``
    says the shard had an ``EndingSequenceNumber`` when the split was made (it ends at SHARD_END).
    """

    stream: str
    shard_id: str
    start: ShardPosition
    end: ShardPosition | None = None
    parent_shard_ids: tuple[str, ...] = ()
    closed: bool = False

    def __post_init__(self) -> None:
        if not self.stream or not self.shard_id:
            raise ValueError(f"stream and shard_id must be set: {self}")
        if self.end is not None and self.end.kind is PositionKind.AFTER_SEQUENCE_NUMBER:
            raise ValueError(f"an end cut is AT_TIMESTAMP, SHARD_END or None: {self}")
        if self.start.kind is PositionKind.SHARD_END and self.end is not None and not self.end.is_shard_end:
            raise ValueError(f"a split that starts at SHARD_END cannot end before it: {self}")

    @property
    def split_id(self) -> str:
        """The shard id."""
        return self.shard_id

    def with_range(self, start: ShardPosition, end: ShardPosition | None) -> KinesisShardSplit:
        """The same shard bounded to ``[start, end)``."""
        return KinesisShardSplit(self.stream, self.shard_id, start, end, self.parent_shard_ids, self.closed)


class KinesisShardSplitState:
    """The mutable reading position inside a split (only inside the reader)."""

    __slots__ = ("split", "position")

    def __init__(self, split: KinesisShardSplit) -> None:
        self.split = split
        self.position = split.start

    @classmethod
    def from_split(cls, split: KinesisShardSplit) -> KinesisShardSplitState:
        """The state at the split's start."""
        return cls(split)

    def to_split(self) -> KinesisShardSplit:
        """A split that resumes after the last emitted record, with the same end."""
        return self.split.with_range(self.position, self.split.end)


class KinesisShardSplitSerializer(VersionedSerializer[KinesisShardSplit]):
    """Version 1: ``{"stream", "shard", "parents", "start", "end", "closed"}`` (``ShardPosition`` JSON)."""

    @property
    @override
    def version(self) -> int:
        return 1

    @override
    def to_json(self, value: KinesisShardSplit) -> Json:
        return {
            "stream": value.stream,
            "shard": value.shard_id,
            "parents": list(value.parent_shard_ids),
            "start": value.start.to_json(),
            "end": value.end.to_json() if value.end is not None else None,
            "closed": value.closed,
        }

    @override
    def from_json(self, version: int, data: Json) -> KinesisShardSplit:
        match version:
            case 1:
                return KinesisShardSplit(
                    stream=str(data["stream"]),
                    shard_id=str(data["shard"]),
                    start=ShardPosition.from_json(data["start"]),
                    end=ShardPosition.from_json(data["end"]) if data["end"] is not None else None,
                    parent_shard_ids=tuple(str(p) for p in data["parents"]),
                    closed=bool(data["closed"]),
                )
            case _:
                raise self.unsupported(version)
