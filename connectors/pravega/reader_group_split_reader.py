"""``PravegaReaderGroupSplitReader``: reads as one reader of a reader group on the official client.

The official client's reader is asynchronous: the split reader owns an asyncio event loop on its
fetcher thread and keeps one ``get_segment_slice_async`` call pending per reader across fetches
(never cancelled, so no acquired slice is dropped); a fetch waits for a slice at most
``WAIT_S``. A slice's events become one Arrow batch and the slice is released at once, so the
reader group's position moves before the batch is emitted: after a reader failure the events of
batches not yet emitted are not read again (see docs/pravega.md for the guarantee). The slice does
not say which segment it came from: ``segment_id`` is -1 in this mode.

Threading: the fetcher thread (the event loop runs only inside ``fetch``); ``wake_up`` sets an event.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import numpy as np
import pyarrow as pa

from connector_base import RecordsBySplits, SplitReader, SplitsAddition, SplitsChange
from connectors.pravega.event_decoding import const_string_array
from connectors.pravega.options import PravegaSourceOptions
from connectors.pravega.reader_group_enumerator import open_reader_group
from connectors.pravega.reader_group_split import PravegaReaderGroupSplit
from connectors.pravega.split_reader import EVENT_SCHEMA, SegmentChunk

__all__ = ["PravegaReaderGroupSplitReader", "UNKNOWN_SEGMENT"]

LOG = logging.getLogger(__name__)

WAIT_S = 0.2
UNKNOWN_SEGMENT = -1


class PravegaReaderGroupSplitReader(SplitReader[SegmentChunk, PravegaReaderGroupSplit]):
    """See the module docstring."""

    def __init__(self, options: PravegaSourceOptions) -> None:
        self._options = options
        self._manager: Any = None
        self._group: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._readers: dict[str, tuple[PravegaReaderGroupSplit, Any]] = {}
        self._pending: dict[str, asyncio.Task[Any]] = {}
        self._wake = threading.Event()

    def _event_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop

    def handle_splits_changes(self, change: SplitsChange[PravegaReaderGroupSplit]) -> None:  # noqa: D102
        for split in change.splits:
            if isinstance(change, SplitsAddition):
                if self._group is None:
                    self._manager, self._group = open_reader_group(self._options)
                reader = self._group.create_reader(split.reader_name)
                self._readers[split.split_id] = (split, reader)
            else:
                self._offline(split.split_id)

    @staticmethod
    async def _next_slice(reader: Any) -> Any:
        return await reader.get_segment_slice_async()

    def fetch(self) -> RecordsBySplits[SegmentChunk]:  # noqa: D102
        out: RecordsBySplits[SegmentChunk] = RecordsBySplits()
        if not self._readers:
            self._wake.wait(0.05)
            self._wake.clear()
            return out
        loop = self._event_loop()
        for sid, (_split, reader) in self._readers.items():
            if sid not in self._pending:
                self._pending[sid] = loop.create_task(self._next_slice(reader))
        loop.run_until_complete(
            asyncio.wait(list(self._pending.values()), timeout=WAIT_S, return_when=asyncio.FIRST_COMPLETED)
        )
        for sid, task in list(self._pending.items()):
            if not task.done():
                continue
            del self._pending[sid]
            split, reader = self._readers[sid]
            segment_slice = task.result()
            payloads: list[bytes] = []
            offsets: list[int] = []
            for event in segment_slice:
                payloads.append(event.data())
                offsets.append(event.offset())
            reader.release_segment(segment_slice)
            n = len(payloads)
            if n:
                batch = pa.RecordBatch.from_arrays(
                    [
                        pa.array(payloads, pa.binary()),
                        const_string_array(split.scope, n),
                        const_string_array(split.stream, n),
                        pa.array(np.full(n, UNKNOWN_SEGMENT, dtype=np.int64)),
                        pa.array(offsets, pa.int64()),
                    ],
                    schema=EVENT_SCHEMA,
                )
                out.add(sid, SegmentChunk(batch, UNKNOWN_SEGMENT))
        return out

    def _offline(self, sid: str) -> None:
        entry = self._readers.pop(sid, None)
        task = self._pending.pop(sid, None)
        if task is not None and not task.done():
            task.cancel()
        if entry is not None:
            try:
                entry[1].reader_offline()
            except Exception as e:  # the group reassigns its segments after a timeout anyway
                LOG.warning("reader %s could not go offline: %s", entry[0].reader_name, e)

    def wake_up(self) -> None:  # noqa: D102
        self._wake.set()

    def close(self) -> None:  # noqa: D102
        for sid in list(self._readers):
            self._offline(sid)
        if self._loop is not None:
            self._loop.close()
            self._loop = None
