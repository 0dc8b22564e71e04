"""``PravegaReaderGroupSplit``: one reader of a Pravega reader group (FLIP-27's Pravega mapping)."""

from __future__ import annotations

from dataclasses import dataclass

from connector_base import SourceSplit, VersionedSerializer
from connector_base.serialization import Json

__all__ = ["PravegaReaderGroupSplit", "PravegaReaderGroupSplitSerializer"]


@dataclass(frozen=True, slots=True)
class PravegaReaderGroupSplit(SourceSplit):
    """Reader ``reader_index`` of reader group ``group`` in ``scope`` over ``stream``.

    The split has no position: the reader group holds the positions of its readers.
    """

    scope: str
    stream: str
    group: str
    reader_index: int

    def __post_init__(self) -> None:
        if not self.scope or not self.stream or not self.group or self.reader_index < 0:
            raise ValueError(f"scope, stream and group must be set and reader_index >= 0: {self}")

    @property
    def split_id(self) -> str:
        """``rg/<scope>/<group>/<reader index>``."""
        return f"rg/{self.scope}/{self.group}/{self.reader_index}"

    @property
    def reader_name(self) -> str:
        """The name of the reader in the group."""
        return f"{self.group}-reader-{self.reader_index}"


class PravegaReaderGroupSplitSerializer(VersionedSerializer[PravegaReaderGroupSplit]):
    """Version 1: ``{"sc": scope, "st": stream, "g": group, "i": reader index}``."""

    @property
    def version(self) -> int:  # noqa: D102
        return 1

    def to_json(self, value: PravegaReaderGroupSplit) -> Json:  # noqa: D102
        return {"sc": value.scope, "st": value.stream, "g": value.group, "i": value.reader_index}

    def from_json(self, version: int, data: Json) -> PravegaReaderGroupSplit:  # noqa: D102
        match version:
            case 1:
                return PravegaReaderGroupSplit(
                    str(data["sc"]), str(data["st"]), str(data["g"]), int(data["i"])
                )
            case _:
                raise self.unsupported(version)
