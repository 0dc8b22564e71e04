"""``HybridSourceSplit``: a child source's split tagged with the stage (child source) it belongs to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from typing_extensions import override

from connector_base.errors import SerializationError
from connector_base.serialization import Json, VersionedSerializer
from connector_base.split import SourceSplit

__all__ = ["HybridSourceSplit", "HybridSourceSplitSerializer"]


@dataclass(frozen=True, slots=True)
class HybridSourceSplit(SourceSplit):
    """The split ``split`` of the child source at index ``stage`` of the hybrid source's list."""

    stage: int
    split: Any

    def __post_init__(self) -> None:
        if self.stage < 0:
            raise ValueError(f"stage must be >= 0, got {self.stage}")
        if not isinstance(self.split, SourceSplit):
            raise TypeError(f"split must be a SourceSplit, got {type(self.split).__name__}")

    @property
    @override
    def split_id(self) -> str:
        return f"{self.stage}/{self.split.split_id}"


class HybridSourceSplitSerializer(VersionedSerializer[HybridSourceSplit]):
    """Version 1: ``{"stage": i, "split": <the child's versioned split>}``."""

    def __init__(self, child_serializers: Sequence[VersionedSerializer[Any]]) -> None:
        self._children = list(child_serializers)

    @property
    @override
    def version(self) -> int:
        return 1

    @override
    def to_json(self, value: HybridSourceSplit) -> Json:
        return {"stage": value.stage, "split": self._children[value.stage].serialize(value.split)}

    @override
    def from_json(self, version: int, data: Json) -> HybridSourceSplit:
        match version:
            case 1:
                stage = int(data["stage"])
                if not 0 <= stage < len(self._children):
                    raise SerializationError(
                        f"hybrid split of stage {stage}, but this source has {len(self._children)} stages"
                    )
                return HybridSourceSplit(stage, self._children[stage].deserialize(data["split"]))
            case _:
                raise self.unsupported(version)
