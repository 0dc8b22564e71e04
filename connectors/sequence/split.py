"""``SequenceSplit``: one partition of the sequence system, from ``start`` up to ``end`` (exclusive)."""

from __future__ import annotations

from dataclasses import dataclass

from typing_extensions import override

from connector_base import SourceSplit, VersionedSerializer
from connector_base.serialization import Json

UNBOUNDED = -1
"""``end`` of a split that has no end."""


@dataclass(frozen=True, slots=True)
class SequenceSplit(SourceSplit):
    """Partition ``partition`` from index ``start``; ``end`` is exclusive or ``UNBOUNDED``."""

    partition: int
    start: int
    end: int = UNBOUNDED

    def __post_init__(self) -> None:
        if self.partition < 0 or self.start < 0:
            raise ValueError(f"partition and start must be >= 0: {self}")
        if self.end != UNBOUNDED and self.end < self.start:
            raise ValueError(f"end must be >= start or UNBOUNDED: {self}")

    @property
    def split_id(self) -> str:
        """``p<partition>``."""
        return f"p{self.partition}"


class SequenceSplitState:
    """The mutable position inside a split (only inside the reader)."""

    __slots__ = ("split", "next_index")

    def __init__(self, split: SequenceSplit) -> None:
        self.split = split
        self.next_index = split.start

    @classmethod
    def from_split(cls, split: SequenceSplit) -> SequenceSplitState:
        """The state at the split's start."""
        return cls(split)

    def to_split(self) -> SequenceSplit:
        """A split that resumes after the last emitted record."""
        return SequenceSplit(self.split.partition, self.next_index, self.split.end)


class SequenceSplitSerializer(VersionedSerializer[SequenceSplit]):
    """Version 1: ``{"p": partition, "s": start, "e": end}``."""

    @property
    @override
    def version(self) -> int:
        return 1

    @override
    def to_json(self, value: SequenceSplit) -> Json:
        return {"p": value.partition, "s": value.start, "e": value.end}

    @override
    def from_json(self, version: int, data: Json) -> SequenceSplit:
        match version:
            case 1:
                return SequenceSplit(int(data["p"]), int(data["s"]), int(data["e"]))
            case _:
                raise self.unsupported(version)
