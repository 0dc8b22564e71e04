"""Table segments: versioned key-value logs, as the Rust client's reader groups use them.

A table segment is modelled the way the real store lays it out: an append-only log of records.
A key's version is the offset of the record that last wrote it, so versions grow monotonically
and "positions" for delta reads are offsets in the same log.

Conditional writes follow the segment store's rules:

* ``KEY_NO_VERSION`` updates or removes unconditionally;
* ``KEY_NOT_EXISTS`` updates only a key that is absent;
* any other version must equal the key's current version, else the whole batch fails with
  :class:`BadKeyVersionError` (or :class:`KeyNotFoundError` if a versioned key is absent).

A batch is applied atomically: all keys or none. Every condition in a batch is checked against the
state before the batch, and a key named twice is written twice (the last value wins), as the Rust
client's synchronizer relies on (it bumps a map-version key once per inserted entry).
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass
from typing import Any

from .wire_commands import KEY_NO_VERSION, KEY_NOT_EXISTS, NO_OFFSET

__all__ = ["TableSegment", "TableError", "BadKeyVersionError", "KeyNotFoundError", "BadOffsetError"]

_RECORD_HEADER = 17  # flags (1) + key length (4) + value length (4) + version (8), for sizing only


class TableError(Exception):
    """A conditional table operation whose condition does not hold."""


class BadKeyVersionError(TableError):
    """A key's version differs from the one the request expected."""


class KeyNotFoundError(TableError):
    """A versioned update or removal names a key that does not exist."""


class BadOffsetError(TableError):
    """The request was conditioned on a table segment length that no longer holds."""


@dataclass(frozen=True, slots=True)
class _Record:
    offset: int
    key: bytes
    value: bytes | None  # None marks a removal

    @property
    def size(self) -> int:
        return _RECORD_HEADER + len(self.key) + len(self.value or b"")


class TableSegment:
    """An in-memory table segment. Not thread-safe: the segment store calls it from one loop."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._log: list[_Record] = []
        self._length = 0
        self._current: dict[bytes, tuple[bytes, int]] = {}  # key -> (value, version)

    @property
    def length(self) -> int:
        """Length of the log in bytes (the position after the last record)."""
        return self._length

    def __len__(self) -> int:
        return len(self._current)

    def _check(self, key: bytes, version: int) -> None:
        current = self._current.get(key)
        if version == KEY_NO_VERSION:
            return
        if version == KEY_NOT_EXISTS:
            if current is not None:
                raise BadKeyVersionError(f"key exists with version {current[1]} in {self.name}")
            return
        if current is None:
            raise KeyNotFoundError(f"key does not exist in {self.name}")
        if current[1] != version:
            raise BadKeyVersionError(
                f"key has version {current[1]}, request expected {version} in {self.name}"
            )

    def _check_offset(self, expected_length: int) -> None:
        if expected_length != NO_OFFSET and expected_length != self._length:
            raise BadOffsetError(f"table length is {self._length}, request expected {expected_length}")

    def _append(self, key: bytes, value: bytes | None) -> int:
        record = _Record(self._length, key, value)
        self._log.append(record)
        self._length += record.size
        if value is None:
            self._current.pop(key, None)
        else:
            self._current[key] = (value, record.offset)
        return record.offset

    def update(self, entries: list[tuple[bytes, int, bytes]], expected_length: int = NO_OFFSET) -> list[int]:
        """Apply ``(key, expected_version, value)`` updates atomically; return the new versions."""
        self._check_offset(expected_length)
        for key, version, _value in entries:  # conditions hold against the state before the batch
            self._check(key, version)
        return [self._append(key, value) for key, _version, value in entries]

    def remove(self, keys: list[tuple[bytes, int]], expected_length: int = NO_OFFSET) -> None:
        """Remove ``(key, expected_version)`` keys atomically; absent unversioned keys are ignored."""
        self._check_offset(expected_length)
        for key, version in keys:
            if version == KEY_NOT_EXISTS:
                raise BadKeyVersionError(
                    f"cannot remove a key on condition that it does not exist ({self.name})"
                )
            self._check(key, version)
        for key, _version in keys:
            if key in self._current:
                self._append(key, None)

    def get(self, key: bytes) -> tuple[bytes, int] | None:
        """Return ``(value, version)`` or ``None`` when the key is absent."""
        return self._current.get(key)

    def keys_page(self, token: bytes, count: int) -> tuple[list[tuple[bytes, int]], bytes]:
        """Return up to ``count`` keys after the continuation ``token`` and the next token."""
        items = self._page(token, count)
        return [(key, version) for key, _value, version in items[0]], items[1]

    def entries_page(self, token: bytes, count: int) -> tuple[list[tuple[bytes, bytes, int]], bytes]:
        """Return up to ``count`` entries ``(key, value, version)`` after ``token`` and the next token."""
        return self._page(token, count)

    def _page(self, token: bytes, count: int) -> tuple[list[tuple[bytes, bytes, int]], bytes]:
        ordered = sorted(self._current.items())
        start = 0
        if token:
            (after_len,) = struct.unpack(">I", token[:4])
            after = token[4 : 4 + after_len]
            start = next((i for i, (key, _) in enumerate(ordered) if key > after), len(ordered))
        chunk = ordered[start : start + max(count, 1)]
        items = [(key, value, version) for key, (value, version) in chunk]
        next_token = struct.pack(">I", len(chunk[-1][0])) + chunk[-1][0] if chunk else token
        return items, next_token

    def delta(self, from_position: int, count: int) -> tuple[list[tuple[bytes, bytes, int]], bool, int]:
        """Entries changed in records at or after ``from_position``.

        Returns ``(entries, reached_end, last_position)``: up to ``count`` live keys (latest write
        wins; keys removed in the range are left out) and the position after the last record read.
        """
        result: dict[bytes, tuple[bytes, int]] = {}
        position = max(from_position, 0)
        index = next((i for i, record in enumerate(self._log) if record.offset >= position), len(self._log))
        while index < len(self._log) and len(result) < max(count, 1):
            record = self._log[index]
            if record.value is None:
                result.pop(record.key, None)
            else:
                result[record.key] = (record.value, record.offset)
            position = record.offset + record.size
            index += 1
        entries = [(key, value, version) for key, (value, version) in result.items()]
        return entries, index >= len(self._log), position

    def to_json(self) -> dict[str, Any]:
        """Serialize the log (JSON primitives) for the data directory."""
        return {
            "name": self.name,
            "log": [
                [
                    base64.b64encode(r.key).decode(),
                    None if r.value is None else base64.b64encode(r.value).decode(),
                ]
                for r in self._log
            ],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableSegment:
        """Rebuild a table segment written by :meth:`to_json`."""
        table = cls(data["name"])
        for key, value in data["log"]:
            table._append(base64.b64decode(key), None if value is None else base64.b64decode(value))
        return table
