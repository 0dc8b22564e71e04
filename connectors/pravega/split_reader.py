"""``PravegaSegmentSplitReader``: reads segment byte ranges and decodes them into Arrow batches.

Each fetch reads up to ``FETCH_BYTES`` of every readable split with pipelined ``ReadSegment``
requests and decodes whole events in bulk; a partial event at the end of a read waits for the
next fetch. A bounded split (every Spark range) ends at its end offset; an open split (local
runtime) reads up to the tail it learns from ``GetStreamSegmentInfo`` (so no read waits in the
store's long-poll) and ends when the segment is sealed and read to its end. A split whose
predecessors are still assigned to this reader waits for them (order per routing key).

Truncated data (``SegmentIsTruncated``) fails the read with ``DataLossError`` naming the segment
and offsets, or, with ``failOnDataLoss=false``, skips to the new head with a warning.

Event time: Pravega events carry no time of their own (a user column gives it, through the
strategy's timestamp assigner). Each fetch reports open splits as caught up when their read position
has reached the segment's tail as just learnt from ``GetStreamSegmentInfo`` (no extra request);
bounded splits have unread events until they finish. Splits paused by watermark alignment are not
read; their position and any partial event read ahead stay, so they resume exactly where they were.

Threading: the fetcher thread; ``wake_up`` only sets an event that ends the idle wait.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from typing_extensions import override

from connector_base import (
    DataLossError,
    MalformedRecordError,
    RecordsBySplits,
    SplitReader,
    SplitsAddition,
    SplitsChange,
)
from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.event_decoding import const_string_array, decode_events
from connectors.pravega.options import PravegaSourceOptions
from connectors.pravega.segment_store_client import NoSuchSegmentError, SegmentTruncatedError
from connectors.pravega.split import PravegaSegmentSplit

__all__ = ["FETCH_BYTES", "FETCH_BYTES_CONFIG", "PravegaSegmentSplitReader", "SegmentChunk", "EVENT_SCHEMA"]

LOG = logging.getLogger(__name__)

FETCH_BYTES = 8 * 1024 * 1024
"""Bytes read per split per fetch (about 80,000 events of 100 bytes: one large Arrow batch)."""
FETCH_BYTES_CONFIG = "pravega.reader.fetch.bytes"
"""Reader configuration key: bytes read per split per fetch (default ``FETCH_BYTES``)."""
IDLE_WAIT_S = 0.05
BUFFER_SLACK = 64 * 1024
"""Read buffer bytes beyond a fetch, for the partial event carried over from the previous one."""

EVENT_SCHEMA = pa.schema(
    [
        pa.field("event", pa.binary()),
        pa.field("scope", pa.string()),
        pa.field("stream", pa.string()),
        pa.field("segment_id", pa.int64()),
        pa.field("offset", pa.int64()),
    ]
)
"""The output columns."""


@dataclass(frozen=True, slots=True)
class SegmentChunk:
    """Decoded events of one split and the offset right after the last of them."""

    batch: pa.RecordBatch
    next_offset: int


class _Active:
    __slots__ = ("split", "pos", "carry", "carry_at", "sealed_end", "constants")

    def __init__(self, split: PravegaSegmentSplit) -> None:
        self.split = split
        self.pos = split.start_offset  # next byte to read
        self.carry = b""  # bytes of a partial event read ahead
        self.carry_at = split.start_offset  # offset of carry[0] (an event boundary)
        self.sealed_end: int | None = None
        self.constants: list[pa.Array] = []  # scope, stream, segment_id columns, sliced per batch

    def constant_columns(self, n: int) -> list[pa.Array]:
        """The split's scope, stream and segment id columns for ``n`` rows (built once, then sliced)."""
        if not self.constants or len(self.constants[0]) < n:
            split, size = self.split, n + n // 4  # room for the next fetch's few more events
            self.constants = [
                const_string_array(split.scope, size),
                const_string_array(split.stream, size),
                pa.array(np.full(size, split.segment_id, dtype=np.int64)),
            ]
        return [c.slice(0, n) for c in self.constants]


class PravegaSegmentSplitReader(SplitReader[SegmentChunk, PravegaSegmentSplit]):
    """See the module docstring."""

    def __init__(self, options: PravegaSourceOptions, fetch_bytes: int = FETCH_BYTES) -> None:
        self._options = options
        self._fetch_bytes = fetch_bytes
        self._client: PravegaClusterClient | None = None
        self._splits: dict[str, _Active] = {}
        self._paused: set[str] = set()
        self._wake = threading.Event()
        self._buffer = bytearray()  # reused by every read: decoding copies what it keeps

    def _cluster(self) -> PravegaClusterClient:
        if self._client is None:
            self._client = PravegaClusterClient(self._options.connection)
        return self._client

    @override
    def fetch(self) -> RecordsBySplits[SegmentChunk]:
        out: RecordsBySplits[SegmentChunk] = RecordsBySplits()
        progressed = False
        for sid, active in list(self._splits.items()):
            split = active.split
            if sid in self._paused or any(p in self._splits for p in split.predecessor_ids()):
                continue
            try:
                limit = self._limit(active)
                if limit is None:
                    out.add_finished_split(sid)
                    del self._splits[sid]
                    continue
                if active.pos >= limit:
                    if active.carry:
                        raise MalformedRecordError(
                            f"segment {split.segment_name}: {len(active.carry)} bytes at offset "
                            f"{active.carry_at} end at {limit} in the middle of an event"
                        )
                    if split.is_bounded or active.sealed_end is not None:
                        out.add_finished_split(sid)
                        del self._splits[sid]
                    else:
                        out.set_caught_up(sid, True)  # at the tail the store just reported
                    continue
                chunk = self._read(active, min(limit, active.pos + self._fetch_bytes))
                if not split.is_bounded:
                    out.set_caught_up(sid, active.pos >= limit and not active.carry)
            except SegmentTruncatedError as e:
                self._truncated(active, e)
                progressed = True
                continue
            except NoSuchSegmentError:
                self._lost(active, f"the segment {split.segment_name} no longer exists")
                out.add_finished_split(sid)
                del self._splits[sid]
                continue
            if chunk is not None:
                out.add(sid, chunk)
            progressed = True
        if not progressed and not out.finished_splits():
            self._wake.wait(IDLE_WAIT_S)
            self._wake.clear()
        return out

    def _limit(self, active: _Active) -> int | None:
        """How far the split can be read now; ``None`` when the segment is gone (and that is allowed)."""
        split = active.split
        if split.is_bounded:
            return split.end_offset
        if active.sealed_end is not None:
            return active.sealed_end
        info = self._cluster().info(split.scope, split.stream, split.segment_id)
        if info.sealed:
            active.sealed_end = info.tail
        if info.head > active.carry_at:
            raise SegmentTruncatedError(split.segment_name, active.carry_at, info.head)
        return info.tail

    def _read(self, active: _Active, upto: int) -> SegmentChunk | None:
        split = active.split
        # the carry and the reads go into one reused buffer: a fresh multi-MB buffer per fetch
        # (b"".join) cost more in page faults than the copy itself
        size = len(active.carry) + upto - active.pos
        if len(self._buffer) < size:  # room for a fetch and a partial event carried into it
            self._buffer = bytearray(max(size, self._fetch_bytes + BUFFER_SLACK))
        view = memoryview(self._buffer)
        filled = len(active.carry)
        view[:filled] = active.carry
        for _offset, data in self._cluster().read(
            split.scope, split.stream, split.segment_id, active.pos, upto
        ):
            view[filled : filled + len(data)] = data
            filled += len(data)
        buf = view[:filled]
        active.pos = upto
        decoded = decode_events(buf, active.carry_at, split.segment_name)
        active.carry = bytes(buf[decoded.consumed :])
        active.carry_at += decoded.consumed
        n = len(decoded.offsets)
        if n == 0:
            return None
        batch = pa.RecordBatch.from_arrays(
            [decoded.payloads, *active.constant_columns(n), pa.array(decoded.offsets)],
            schema=EVENT_SCHEMA,
        )
        return SegmentChunk(batch, active.carry_at)

    def _truncated(self, active: _Active, e: SegmentTruncatedError) -> None:
        split = active.split
        message = (
            f"data loss in segment {split.segment_name} (id {split.segment_id}): offsets {e.offset} to "
            f"{e.head} were truncated before they were read"
        )
        if split.is_bounded:
            message += f" (planned range [{split.start_offset}, {split.end_offset}))"
        if self._options.fail_on_data_loss:
            raise DataLossError(message + ". Set failOnDataLoss=false to skip to the head and continue.")
        LOG.warning("%s; skipping to offset %d (failOnDataLoss=false)", message, e.head)
        active.pos = active.carry_at = e.head
        active.carry = b""
        if split.is_bounded and e.head >= split.end_offset:
            active.pos = active.carry_at = split.end_offset

    def _lost(self, active: _Active, why: str) -> None:
        message = f"data loss: {why}; offsets from {active.carry_at} on cannot be read"
        if self._options.fail_on_data_loss:
            raise DataLossError(message + ". Set failOnDataLoss=false to skip it and continue.")
        LOG.warning("%s (failOnDataLoss=false)", message)

    @override
    def handle_splits_changes(self, change: SplitsChange[PravegaSegmentSplit]) -> None:
        for split in change.splits:
            if isinstance(change, SplitsAddition):
                self._splits[split.split_id] = _Active(split)
            else:
                self._splits.pop(split.split_id, None)
                self._paused.discard(split.split_id)

    @override
    def pause_or_resume_splits(
        self, splits_to_pause: Sequence[PravegaSegmentSplit], splits_to_resume: Sequence[PravegaSegmentSplit]
    ) -> None:
        self._paused.update(s.split_id for s in splits_to_pause if s.split_id in self._splits)
        self._paused.difference_update(s.split_id for s in splits_to_resume)

    @override
    def wake_up(self) -> None:
        self._wake.set()

    @override
    def close(self) -> None:
        self._splits.clear()
        self._paused.clear()
        if self._client is not None:
            self._client.close()
            self._client = None
