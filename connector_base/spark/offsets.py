"""The offset dict the bridge hands to Spark: the FLIP-27 checkpoint as versioned JSON.

Layout (version 1)::

    {"v": 1,
     "enumerator": {"v": .., "data": ..},          # the enumerator's checkpoint
     "splits": {"<split id>": {"split": {"v": .., "data": ..},  # the split as assigned
                               "first": <position>,              # where it started
                               "pos": <position>}},              # where this offset stands
     "noMoreSplits": false}

Version 2 (written only when ``eventTime.alignment=cut`` stamped the offset; otherwise version 1 is
written, so offsets of queries without a cut are unchanged) adds::

     "cut": {"t": <ms>,                              # the event-time cut T of this batch
             "et": {"<split id>": <ms> | null}}       # each split's event time at ``pos``

Any version may carry ``"metadata"``: what the data source records besides positions
(``SourceDataSource.offset_metadata``, e.g. the reader schemas fixed at ``load()``), checked by
``check_offset_metadata`` when a restarted query resumes or replays from the offset.

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

__all__ = ["BridgeOffset", "EventTimeMark", "SplitEntry", "OFFSET_VERSION"]

OFFSET_VERSION = 2
PLAIN_OFFSET_VERSION = 1
"""The version written when the offset carries no cut."""

SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""


@dataclass(slots=True)
class SplitEntry(Generic[SplitT]):
    """One split in an offset."""

    split: SplitT
    first: Json
    pos: Json


@dataclass(frozen=True, slots=True)
class EventTimeMark:
    """The event-time cut of a micro-batch: ``cut_ms`` (T) and each split's event time."""

    cut_ms: int
    split_times: dict[str, int | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``"cut"`` entry of a version 2 offset."""
        return {"t": self.cut_ms, "et": dict(sorted(self.split_times.items()))}

    @classmethod
    def from_json(cls, data: Any) -> EventTimeMark | None:
        """Parse the ``"cut"`` entry (``None`` when absent)."""
        if data is None:
            return None
        if not isinstance(data, Mapping) or not isinstance(data.get("t"), int):
            raise SerializationError(f"offset entry 'cut' must be {{'t': <ms>, 'et': {{...}}}}, got {data!r}")
        times = data.get("et", {})
        return cls(int(data["t"]), {str(k): (None if v is None else int(v)) for k, v in times.items()})

    @classmethod
    def of_offset(cls, data: Mapping[str, Any]) -> EventTimeMark | None:
        """The mark of an offset dict of any version (``None`` for version 1)."""
        return cls.from_json(data.get("cut")) if data.get("v") == OFFSET_VERSION else None


@dataclass(slots=True)
class BridgeOffset(Generic[SplitT]):
    """The parsed offset."""

    enumerator: Json
    splits: dict[str, SplitEntry[SplitT]] = field(default_factory=dict)
    no_more_splits: bool = False
    event_time: EventTimeMark | None = None

    def to_json(self, split_serializer: VersionedSerializer[SplitT]) -> dict[str, Any]:
        """The dict for Spark (version 1 unless it carries an event-time cut)."""
        data = self._v1_json(split_serializer)
        if self.event_time is not None:
            data["v"] = OFFSET_VERSION
            data["cut"] = self.event_time.to_json()
        return data

    def _v1_json(self, split_serializer: VersionedSerializer[SplitT]) -> dict[str, Any]:
        return {
            "v": PLAIN_OFFSET_VERSION,
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
            case 1 | 2:  # 2 adds "cut" (the event-time cut and each split's event time)
                return cls(
                    enumerator=data["enumerator"],
                    splits={
                        sid: SplitEntry(split_serializer.deserialize(e["split"]), e["first"], e["pos"])
                        for sid, e in data["splits"].items()
                    },
                    no_more_splits=bool(data.get("noMoreSplits", False)),
                    event_time=EventTimeMark.from_json(data.get("cut")) if version == 2 else None,
                )
            case _:
                raise SerializationError(
                    f"unsupported offset version {version!r} (this release reads 1..{OFFSET_VERSION}); "
                    f"offset starts with {dumps_canonical(data)[:200]}"
                )
