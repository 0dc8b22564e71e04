"""``FileSourceSplit``: a byte range of a line file, a whole compressed file, or Parquet row groups."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum

from typing_extensions import override

from connector_base import SourceSplit, VersionedSerializer
from connector_base.serialization import Json


class SplitKind(Enum):
    """How a split's ``offset``/``length`` and positions are counted."""

    LINES = "lines"
    """A byte range of an uncompressed line-oriented file; a line belongs to the range it starts in."""
    GZIP = "gzip"
    """A file read whole: compressed (gzip, bzip2 or deflate; not splittable), or a ``multiLine`` JSON
    document (the value stays "gzip" for the offsets already written); positions are 0 (unread) or
    the file size (read)."""
    ROW_GROUPS = "row_groups"
    """Parquet row groups; offsets and positions are row-group indexes."""


@dataclass(frozen=True, slots=True)
class FileSourceSplit(SourceSplit):
    """``[offset, offset + length)`` of the file at ``path``, read from ``position``.

    ``file_size`` and ``mtime_ms`` are what discovery saw; the file is read as of that size (bytes
    appended later are ignored, a shorter file is a ``DataLossError``). ``position`` (``None``:
    ``offset``) is where the reader resumes: for ``LINES`` the first line starting at or after it.
    """

    path: str
    offset: int
    length: int
    file_size: int
    mtime_ms: int
    kind: SplitKind
    position: int | None = None

    def __post_init__(self) -> None:
        if self.offset < 0 or self.length < 0 or self.file_size < 0:
            raise ValueError(f"offset, length and file_size must be >= 0: {self}")
        if self.kind is not SplitKind.ROW_GROUPS and self.end > self.file_size:
            raise ValueError(f"a byte range must end within the file: {self}")
        if self.position is not None and not self.offset <= self.position <= self.end:
            raise ValueError(f"position must lie in [offset, offset + length]: {self}")

    @property
    def split_id(self) -> str:
        """``<path>#<offset>`` (the range start, so range splits of one file differ)."""
        return f"{self.path}#{self.offset}"

    @property
    def end(self) -> int:
        """The exclusive end of the range."""
        return self.offset + self.length

    @property
    def start_position(self) -> int:
        """Where reading starts."""
        return self.offset if self.position is None else self.position

    def with_range(self, start: int, end: int) -> FileSourceSplit:
        """The same file bounded to ``[start, end)``, to be read from ``start``."""
        return dataclasses.replace(self, offset=start, length=end - start, position=None)


class FileSourceSplitState:
    """The mutable read position inside a split (only inside the reader)."""

    __slots__ = ("split", "position")

    def __init__(self, split: FileSourceSplit) -> None:
        self.split = split
        self.position = split.start_position

    @classmethod
    def from_split(cls, split: FileSourceSplit) -> FileSourceSplitState:
        """The state where ``split`` resumes."""
        return cls(split)

    def to_split(self) -> FileSourceSplit:
        """A split that resumes after the last emitted record."""
        return dataclasses.replace(self.split, position=self.position)


class FileSourceSplitSerializer(VersionedSerializer[FileSourceSplit]):
    """Version 1: ``{"path", "offset", "length", "size", "mtime", "kind", "pos"}``."""

    @property
    @override
    def version(self) -> int:
        return 1

    @override
    def to_json(self, value: FileSourceSplit) -> Json:
        return {
            "path": value.path,
            "offset": value.offset,
            "length": value.length,
            "size": value.file_size,
            "mtime": value.mtime_ms,
            "kind": value.kind.value,
            "pos": value.position,
        }

    @override
    def from_json(self, version: int, data: Json) -> FileSourceSplit:
        match version:
            case 1:
                pos = data["pos"]
                return FileSourceSplit(
                    str(data["path"]),
                    int(data["offset"]),
                    int(data["length"]),
                    int(data["size"]),
                    int(data["mtime"]),
                    SplitKind(data["kind"]),
                    None if pos is None else int(pos),
                )
            case _:
                raise self.unsupported(version)
