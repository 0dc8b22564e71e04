"""Versioned JSON serializers for splits and enumerator checkpoints.

Serialized state is a JSON primitive tree wrapped with its format version::

    {"v": 1, "data": {...}}

A serializer keeps a reader for every version it ever wrote (``from_json`` matches on the version),
so a checkpoint or a Spark offset written by an older release stays readable.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from typing_extensions import override

from connector_base.errors import SerializationError

__all__ = [
    "Json",
    "VersionedSerializer",
    "FunctionSerializer",
    "ListSerializer",
    "dumps_canonical",
]

T = TypeVar("T")
"""The type being serialized."""

Json = Any
"""A tree of ``dict``/``list``/``str``/``int``/``float``/``bool``/``None``."""

VERSION_KEY = "v"
DATA_KEY = "data"


def dumps_canonical(value: Json) -> str:
    """Dump JSON with sorted keys and no spaces, so equal state gives equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class VersionedSerializer(ABC, Generic[T]):
    """Turns ``T`` into versioned JSON primitives and back."""

    @property
    @abstractmethod
    def version(self) -> int:
        """The version ``to_json`` writes (the current version)."""

    @abstractmethod
    def to_json(self, value: T) -> Json:
        """Serialize ``value`` in the current version (without the version wrapper)."""

    @abstractmethod
    def from_json(self, version: int, data: Json) -> T:
        """Read ``data`` written in ``version``; raise ``SerializationError`` for unknown versions."""

    def serialize(self, value: T) -> dict[str, Json]:
        """Serialize with the version wrapper."""
        return {VERSION_KEY: self.version, DATA_KEY: self.to_json(value)}

    def deserialize(self, wrapped: Json) -> T:
        """Read a value written by ``serialize`` of this or an earlier version."""
        if not isinstance(wrapped, dict) or VERSION_KEY not in wrapped or DATA_KEY not in wrapped:
            raise SerializationError(
                f"{type(self).__name__}: expected {{'v': <int>, 'data': ...}}, got {str(wrapped)[:200]}"
            )
        version = wrapped[VERSION_KEY]
        if not isinstance(version, int) or version < 1 or version > self.version:
            raise SerializationError(
                f"{type(self).__name__}: unsupported version {version!r}; this release reads "
                f"1..{self.version}"
            )
        try:
            return self.from_json(version, wrapped[DATA_KEY])
        except SerializationError:
            raise
        except (KeyError, TypeError, ValueError) as e:
            raise SerializationError(f"{type(self).__name__}: cannot read version {version} data: {e}") from e

    def dumps(self, value: T) -> str:
        """Serialize to canonical JSON text."""
        return dumps_canonical(self.serialize(value))

    def loads(self, text: str) -> T:
        """Read JSON text written by ``dumps``."""
        return self.deserialize(json.loads(text))

    def unsupported(self, version: int) -> SerializationError:
        """The error for a version that ``from_json`` does not know."""
        return SerializationError(f"{type(self).__name__}: no reader for version {version}")


class FunctionSerializer(VersionedSerializer[T]):
    """A single-version serializer made of two functions (handy for simple state)."""

    def __init__(self, version: int, to_json: Callable[[T], Json], from_json: Callable[[Json], T]) -> None:
        self._version = version
        self._to = to_json
        self._from = from_json

    @property
    @override
    def version(self) -> int:
        return self._version

    @override
    def to_json(self, value: T) -> Json:
        return self._to(value)

    @override
    def from_json(self, version: int, data: Json) -> T:
        if version != self._version:
            raise self.unsupported(version)
        return self._from(data)


class ListSerializer(VersionedSerializer[list[T]]):
    """Serializes a list of values with an element serializer (the element versions are kept)."""

    def __init__(self, element: VersionedSerializer[T]) -> None:
        self._element = element

    @property
    @override
    def version(self) -> int:
        return 1

    @override
    def to_json(self, value: list[T]) -> Json:
        return [self._element.serialize(v) for v in value]

    @override
    def from_json(self, version: int, data: Json) -> list[T]:
        match version:
            case 1:
                return [self._element.deserialize(d) for d in data]
            case _:
                raise self.unsupported(version)

    def deserialize_many(self, items: Iterable[Json]) -> list[T]:
        """Deserialize already-wrapped elements."""
        return [self._element.deserialize(d) for d in items]
