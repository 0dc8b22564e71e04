"""The offset dict the bridge hands to Spark: the FLIP-27 checkpoint as versioned JSON.

Layout (version 1)::

    {"v": 1,
     "enumerator": {"v": .., "data": ..},          # the enumerator's checkpoint
     "splits": {"<split id>": {"split": {"v": .., "data": ..},  # the split as assigned
                               "first": <position>,              # where it started
                               "pos": <position>}},              # where this offset stands
     "noMoreSplits": false}

A split whose ``pos`` is finished stays in the offset that finished it (so ``partitions`` can plan
its last range) and is dropped from the next one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from connector_base.errors import SerializationError
from connector_base.serialization import Json, VersionedSerializer, dumps_canonical
from connector_base.split import SourceSplit

__all__ = ["BridgeOffset", "SplitEntry", "OFFSET_VERSION"]

OFFSET_VERSION = 1

SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""


@dataclass(slots=True)
class SplitEntry(Generic[SplitT]):
    """One split in an offset."""

    split: SplitT
    first: Json
    pos: Json


@dataclass(slots=True)
class BridgeOffset(Generic[SplitT]):
    """The parsed offset."""

    enumerator: Json
    splits: dict[str, SplitEntry[SplitT]] = field(default_factory=dict)
    no_more_splits: bool = False

    def to_json(self, split_serializer: VersionedSerializer[SplitT]) -> dict[str, Any]:
        """The dict for Spark."""
        return {
            "v": OFFSET_VERSION,
            "enumerator": self.enumerator,
            "splits": {
                sid: {"split": split_serializer.serialize(e.split), "first": e.first, "pos": e.pos}
                for sid, e in sorted(self.splits.items())
            },
            "noMoreSplits": self.no_more_splits,
        }

    @classmethod
    def from_json(
        cls, data: Mapping[str, Any], split_serializer: VersionedSerializer[SplitT]
    ) -> BridgeOffset[SplitT]:
        """Parse an offset written by ``to_json`` (any supported version)."""
        version = data.get("v") if isinstance(data, Mapping) else None
        match version:
            case 1:
                return cls(
                    enumerator=data["enumerator"],
                    splits={
                        sid: SplitEntry(split_serializer.deserialize(e["split"]), e["first"], e["pos"])
                        for sid, e in data["splits"].items()
                    },
                    no_more_splits=bool(data.get("noMoreSplits", False)),
                )
            case _:
                raise SerializationError(
                    f"unsupported offset version {version!r} (this release reads 1..{OFFSET_VERSION}); "
                    f"offset starts with {dumps_canonical(data)[:200]}"
                )
