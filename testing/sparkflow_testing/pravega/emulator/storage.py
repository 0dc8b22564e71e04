"""Segment data, table segments and their optional persistence in a data directory.

Threading: none. Every method runs on the emulator's single asyncio loop; the only asynchronous
part is :meth:`Segment.wait_for_data`, used by at-tail reads.

Persistence (``data_dir`` set): each segment's bytes go to ``segments/<n>.bin`` as they are
appended; everything else (segment metadata, writer event numbers, table segments and the
controller's metadata) is written as one JSON snapshot, ``state.json``, replaced atomically at most
every :data:`SNAPSHOT_INTERVAL` seconds and on shutdown. A graceful stop (SIGTERM) loses nothing;
a hard kill may lose the last interval of metadata (data already written stays).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from .tables import TableSegment

__all__ = ["Segment", "SegmentStorage", "SegmentError", "NULL_ATTRIBUTE_VALUE", "SNAPSHOT_INTERVAL"]

_LOG = logging.getLogger(__name__)
NULL_ATTRIBUTE_VALUE = -(2**63)
SNAPSHOT_INTERVAL = 0.2
_STATE_VERSION = 1


class SegmentError(Exception):
    """Base of segment-level failures, each mapped to a wire error reply."""

    def __init__(self, segment: str, message: str = "") -> None:
        super().__init__(message or segment)
        self.segment = segment


class NoSuchSegmentError(SegmentError):
    """The segment does not exist (or was deleted)."""


class SegmentSealedError(SegmentError):
    """The segment is sealed and takes no more appends."""


class SegmentTruncatedError(SegmentError):
    """A read below the segment's start offset."""

    def __init__(self, segment: str, start_offset: int) -> None:
        super().__init__(segment, f"{segment} is truncated at {start_offset}")
        self.start_offset = start_offset


class SegmentExistsError(SegmentError):
    """The segment already exists."""


class BadOffsetError(SegmentError):
    """An offset outside the segment (for example a truncation beyond its end)."""


class Segment:
    """A stream segment: bytes, seal and truncation state, writer event numbers, attributes."""

    def __init__(self, name: str, file_index: int) -> None:
        self.name = name
        self.file_index = file_index
        self.data = bytearray()
        self.start_offset = 0
        self.sealed = False
        self.last_modified = int(time.time() * 1000)
        self.writers: dict[int, int] = {}  # writer id -> last event number
        self.attributes: dict[int, int] = {}
        self._changed = asyncio.Event()

    @property
    def length(self) -> int:
        """The write offset (total bytes ever appended)."""
        return len(self.data)

    def notify(self) -> None:
        """Wake at-tail readers."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_for_data(self, offset: int, timeout: float) -> None:
        """Wait until the segment grows past ``offset``, is sealed, or ``timeout`` passes."""
        if self.length > offset or self.sealed:
            return
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except TimeoutError:
            pass

    def to_json(self) -> dict[str, Any]:
        """Metadata only; the bytes live in the segment's data file."""
        return {
            "name": self.name,
            "file_index": self.file_index,
            "length": self.length,
            "start_offset": self.start_offset,
            "sealed": self.sealed,
            "last_modified": self.last_modified,
            "writers": {str(k): v for k, v in self.writers.items()},
            "attributes": {str(k): v for k, v in self.attributes.items()},
        }


class SegmentStorage:
    """All segments and table segments of the emulated segment store."""

    def __init__(self, data_dir: Path | None = None) -> None:
        self.segments: dict[str, Segment] = {}
        self.tables: dict[str, TableSegment] = {}
        self._data_dir = data_dir
        self._files: dict[str, Any] = {}
        self._next_file_index = 0
        self._dirty = False
        self._snapshot_task: asyncio.Task[None] | None = None
        self.extra_state: dict[str, Any] = {}  # the controller's metadata, persisted alongside
        self.snapshot_provider: Any = None  # callable returning the controller metadata to persist

    # ---- segments ------------------------------------------------------------------------

    def get(self, name: str) -> Segment:
        """Return the segment or raise :class:`NoSuchSegmentError`."""
        segment = self.segments.get(name)
        if segment is None:
            raise NoSuchSegmentError(name)
        return segment

    def create(self, name: str) -> Segment:
        """Create an empty segment; raise :class:`SegmentExistsError` if it exists."""
        if name in self.segments or name in self.tables:
            raise SegmentExistsError(name)
        segment = Segment(name, self._next_file_index)
        self._next_file_index += 1
        self.segments[name] = segment
        if self._data_dir is not None:
            self._segment_path(segment).write_bytes(b"")
        self.mark_dirty()
        return segment

    def append(self, segment: Segment, data: bytes) -> int:
        """Append ``data`` to an open segment; return the new length."""
        if segment.sealed:
            raise SegmentSealedError(segment.name)
        segment.data += data
        segment.last_modified = int(time.time() * 1000)
        if self._data_dir is not None and data:
            handle = self._files.get(segment.name)
            if handle is None:
                handle = open(self._segment_path(segment), "ab")  # kept open
                self._files[segment.name] = handle
            handle.write(data)
            handle.flush()
        segment.notify()
        self.mark_dirty()
        return segment.length

    def seal(self, name: str) -> Segment:
        """Seal a segment (idempotent)."""
        segment = self.get(name)
        if not segment.sealed:
            segment.sealed = True
            segment.notify()
            self.mark_dirty()
        return segment

    def truncate(self, name: str, offset: int) -> Segment:
        """Move the segment's start offset forward to ``offset`` (never backwards)."""
        segment = self.get(name)
        if offset > segment.length or offset < 0:
            raise BadOffsetError(name, f"truncation offset {offset} outside [0, {segment.length}] of {name}")
        if offset > segment.start_offset:
            segment.start_offset = offset
            self.mark_dirty()
        return segment

    def delete(self, name: str) -> None:
        """Delete a segment and its data file."""
        segment = self.get(name)
        del self.segments[name]
        handle = self._files.pop(name, None)
        if handle is not None:
            handle.close()
        if self._data_dir is not None:
            self._segment_path(segment).unlink(missing_ok=True)
        segment.notify()
        self.mark_dirty()

    def merge(self, target_name: str, source_name: str) -> int:
        """Append a sealed-or-open source segment's bytes to ``target`` and delete the source."""
        target = self.get(target_name)
        source = self.get(source_name)
        length = self.append(target, bytes(source.data[source.start_offset :]))
        self.delete(source_name)
        return length

    def _segment_path(self, segment: Segment) -> Path:
        assert self._data_dir is not None
        return self._data_dir / "segments" / f"{segment.file_index}.bin"

    # ---- table segments ------------------------------------------------------------------

    def get_table(self, name: str) -> TableSegment:
        """Return the table segment or raise :class:`NoSuchSegmentError`."""
        table = self.tables.get(name)
        if table is None:
            raise NoSuchSegmentError(name)
        return table

    def create_table(self, name: str) -> TableSegment:
        """Create a table segment; raise :class:`SegmentExistsError` if the name is taken."""
        if name in self.tables or name in self.segments:
            raise SegmentExistsError(name)
        table = TableSegment(name)
        self.tables[name] = table
        self.mark_dirty()
        return table

    def delete_table(self, name: str) -> None:
        """Delete a table segment."""
        self.get_table(name)
        del self.tables[name]
        self.mark_dirty()

    # ---- persistence ---------------------------------------------------------------------

    def mark_dirty(self) -> None:
        """Schedule a snapshot (no-op without a data directory)."""
        if self._data_dir is None:
            return
        self._dirty = True
        if self._snapshot_task is None or self._snapshot_task.done():
            try:
                self._snapshot_task = asyncio.get_running_loop().create_task(self._snapshot_later())
            except RuntimeError:  # no loop yet (loading): written at the next change or at close
                pass

    async def _snapshot_later(self) -> None:
        await asyncio.sleep(SNAPSHOT_INTERVAL)
        self.write_snapshot()

    def write_snapshot(self) -> None:
        """Write ``state.json`` atomically if anything changed."""
        if self._data_dir is None or not self._dirty:
            return
        self._dirty = False
        state = {
            "version": _STATE_VERSION,
            "next_file_index": self._next_file_index,
            "segments": [segment.to_json() for segment in self.segments.values()],
            "tables": [table.to_json() for table in self.tables.values()],
            "controller": self.snapshot_provider() if self.snapshot_provider else self.extra_state,
        }
        tmp = self._data_dir / "state.json.tmp"
        tmp.write_text(json.dumps(state))
        os.replace(tmp, self._data_dir / "state.json")

    def load(self) -> None:
        """Load a data directory written before; a missing one starts empty."""
        if self._data_dir is None:
            return
        (self._data_dir / "segments").mkdir(parents=True, exist_ok=True)
        path = self._data_dir / "state.json"
        if not path.exists():
            return
        state = json.loads(path.read_text())
        if state.get("version") != _STATE_VERSION:
            raise ValueError(f"{path} has state version {state.get('version')}, expected {_STATE_VERSION}")
        self._next_file_index = state["next_file_index"]
        for item in state["segments"]:
            segment = Segment(item["name"], item["file_index"])
            raw = self._segment_path(segment).read_bytes() if self._segment_path(segment).exists() else b""
            if len(raw) < item["length"]:
                _LOG.warning(
                    "segment %s: data file has %d bytes, metadata says %d",
                    item["name"],
                    len(raw),
                    item["length"],
                )
            segment.data = bytearray(raw)
            segment.start_offset = min(item["start_offset"], segment.length)
            segment.sealed = item["sealed"]
            segment.last_modified = item["last_modified"]
            segment.writers = {int(k): v for k, v in item["writers"].items()}
            segment.attributes = {int(k): v for k, v in item["attributes"].items()}
            self.segments[segment.name] = segment
        for item in state["tables"]:
            table = TableSegment.from_json(item)
            self.tables[table.name] = table
        self.extra_state = state.get("controller", {})
        _LOG.info(
            "loaded %d segments and %d table segments from %s",
            len(self.segments),
            len(self.tables),
            self._data_dir,
        )

    def close(self) -> None:
        """Flush the snapshot and close data files."""
        if self._snapshot_task is not None and not self._snapshot_task.done():
            self._snapshot_task.cancel()
        self.write_snapshot()
        for handle in self._files.values():
            handle.close()
        self._files.clear()
