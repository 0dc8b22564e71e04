"""``KafkaPartitionSplit``: one topic partition, from a starting offset up to an optional stopping offset."""

from __future__ import annotations

from dataclasses import dataclass

from typing_extensions import override

from connector_base import MutableSplitState, SourceSplit, VersionedSerializer
from connector_base.serialization import Json

__all__ = [
    "NO_STOPPING_OFFSET",
    "KafkaPartitionSplit",
    "KafkaPartitionSplitSerializer",
    "KafkaPartitionSplitState",
]

NO_STOPPING_OFFSET = -1
"""``stopping_offset`` of a split that has no end (streaming)."""


@dataclass(frozen=True, slots=True)
class KafkaPartitionSplit(SourceSplit):
    """Partition ``partition`` of ``topic`` from ``starting_offset`` to ``stopping_offset`` (exclusive).

    Offsets are concrete: symbolic positions (earliest, latest, timestamps, committed offsets) are
    resolved on the driver before a split is created.
    """

    topic: str
    partition: int
    starting_offset: int
    stopping_offset: int = NO_STOPPING_OFFSET

    def __post_init__(self) -> None:
        if not self.topic:
            raise ValueError("topic must not be empty")
        if self.partition < 0 or self.starting_offset < 0:
            raise ValueError(f"partition and starting_offset must be >= 0: {self}")
        if self.stopping_offset != NO_STOPPING_OFFSET and self.stopping_offset < self.starting_offset:
            raise ValueError(f"stopping_offset must be >= starting_offset or NO_STOPPING_OFFSET: {self}")

    @property
    def split_id(self) -> str:
        """``<topic>-<partition>``, as Kafka names a topic partition."""
        return f"{self.topic}-{self.partition}"

    @property
    def is_bounded(self) -> bool:
        """Whether the split has a stopping offset."""
        return self.stopping_offset != NO_STOPPING_OFFSET


class KafkaPartitionSplitState(MutableSplitState[KafkaPartitionSplit]):
    """The next offset to read in a split (only inside the reader)."""

    __slots__ = ("split", "next_offset")

    def __init__(self, split: KafkaPartitionSplit) -> None:
        self.split = split
        self.next_offset = split.starting_offset

    @classmethod
    def from_split(cls, split: KafkaPartitionSplit) -> KafkaPartitionSplitState:
        """The state at the split's start."""
        return cls(split)

    def to_split(self) -> KafkaPartitionSplit:
        """A split that resumes after the last emitted record."""
        s = self.split
        return KafkaPartitionSplit(s.topic, s.partition, self.next_offset, s.stopping_offset)


class KafkaPartitionSplitSerializer(VersionedSerializer[KafkaPartitionSplit]):
    """Version 1: ``{"t": topic, "p": partition, "s": starting offset, "e": stopping offset or -1}``."""

    @property
    @override
    def version(self) -> int:
        return 1

    @override
    def to_json(self, value: KafkaPartitionSplit) -> Json:
        return {
            "t": value.topic,
            "p": value.partition,
            "s": value.starting_offset,
            "e": value.stopping_offset,
        }

    @override
    def from_json(self, version: int, data: Json) -> KafkaPartitionSplit:
        match version:
            case 1:
                return KafkaPartitionSplit(str(data["t"]), int(data["p"]), int(data["s"]), int(data["e"]))
            case _:
                raise self.unsupported(version)
