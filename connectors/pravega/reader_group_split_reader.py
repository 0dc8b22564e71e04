"""``PravegaReaderGroupSplitReader``: readers of a reader group, reading by offsets on the project's clients.

Each reader-group split owns segments at positions (see ``PravegaReaderGroupSplit``). The segments
are read by offset with the segment split reader (``GetStreamSegmentInfo`` and pipelined
``ReadSegment``), so every event carries its segment and offset and a reader's position is exact.
When a segment is sealed and read to its end, the reader asks the controller for its successors
and takes each successor whose lowest predecessor is that segment: of the readers that own the
predecessors, exactly one takes it, without any shared state. A successor waits for the
predecessors the same reader owns (order per routing key); across readers a merge does not wait.
In a bounded read a segment of the end stream cut ends at the cut's offset and has no successors,
and a reader ends when it owns no segment.

The official Python client is not used: its slices do not say their segment, its group records
positions only when a reader goes offline, and it can neither build a stream cut nor reset a
group to one (docs/pravega.md).

Event time: a reader is caught up when every segment it owns is (as the segment reader reports:
read to the tail the store just gave); pausing a reader (watermark alignment) pauses its segments
in the segment reader, including successors it takes while paused, and resuming resumes them all.

Threading: the fetcher thread; ``wake_up`` is passed on to the segment reader.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
from typing_extensions import override

from connector_base import RecordsBySplits, SplitReader, SplitsAddition, SplitsChange, SplitsRemoval
from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.options import PravegaSourceOptions
from connectors.pravega.reader_group_split import PravegaReaderGroupSplit, ReaderSegmentPosition
from connectors.pravega.split import PravegaSegmentSplit
from connectors.pravega.split_reader import FETCH_BYTES, PravegaSegmentSplitReader

__all__ = ["END_OF_SEGMENT", "PravegaReaderGroupSplitReader", "ReaderGroupChunk"]

LOG = logging.getLogger(__name__)

END_OF_SEGMENT = -1
"""``next_offset`` of the chunk that ends a segment (the position is dropped, successors follow)."""


@dataclass(frozen=True, slots=True)
class ReaderGroupChunk:
    """Events of one segment up to ``next_offset``, or (``successors`` set) the end of the segment.

    ``batch`` is ``None`` for the end of a segment; ``successors`` are the segments the reader
    takes over from it.
    """

    segment_id: int
    next_offset: int
    batch: pa.RecordBatch | None = None
    successors: tuple[ReaderSegmentPosition, ...] | None = None


class PravegaReaderGroupSplitReader(SplitReader[ReaderGroupChunk, PravegaReaderGroupSplit]):
    """See the module docstring."""

    def __init__(self, options: PravegaSourceOptions, fetch_bytes: int = FETCH_BYTES) -> None:
        self._options = options
        self._segments = PravegaSegmentSplitReader(options, fetch_bytes)
        self._client: PravegaClusterClient | None = None
        self._readers: dict[str, PravegaReaderGroupSplit] = {}
        self._owner: dict[str, tuple[str, PravegaSegmentSplit]] = {}  # segment split id -> (reader, split)
        self._paused: set[str] = set()  # reader split ids
        self._segment_caught_up: dict[str, bool] = {}  # segment split id -> its last report

    def _cluster(self) -> PravegaClusterClient:
        if self._client is None:
            self._client = PravegaClusterClient(self._options.connection)
        return self._client

    def _own(self, reader: PravegaReaderGroupSplit, positions: tuple[ReaderSegmentPosition, ...]) -> None:
        segment_splits = []
        for p in positions:
            split = PravegaSegmentSplit(
                reader.scope, reader.stream, p.segment_id, p.offset, p.end_offset, p.predecessors
            )
            self._owner[split.split_id] = (reader.split_id, split)
            segment_splits.append(split)
        if segment_splits:
            self._segments.handle_splits_changes(SplitsAddition(segment_splits))
            if reader.split_id in self._paused:
                self._segments.pause_or_resume_splits(segment_splits, [])

    @override
    def handle_splits_changes(self, change: SplitsChange[PravegaReaderGroupSplit]) -> None:
        for reader in change.splits:
            if isinstance(change, SplitsAddition):
                self._readers[reader.split_id] = reader
                self._own(reader, reader.positions)
                LOG.info("reader %s online at %s", reader.reader_name, reader.positions)
            else:
                self._offline(reader.split_id)

    def _successors(
        self, reader: PravegaReaderGroupSplit, segment_id: int
    ) -> tuple[ReaderSegmentPosition, ...]:
        ends = dict(reader.end_cut or ())
        if segment_id in ends:
            return ()  # ended at the end stream cut
        taken = []
        for s in self._cluster().successors(reader.scope, reader.stream, segment_id):
            if min(s.predecessors) == segment_id and not any(p in ends for p in s.predecessors):
                sid = s.segment.segment_id
                taken.append(ReaderSegmentPosition(sid, 0, reader.end_offset(sid), tuple(s.predecessors)))
        return tuple(taken)

    @override
    def fetch(self) -> RecordsBySplits[ReaderGroupChunk]:
        inner = self._segments.fetch()
        self._segment_caught_up.update(inner.caught_up_status())
        out: RecordsBySplits[ReaderGroupChunk] = RecordsBySplits()
        while (segment_sid := inner.next_split()) is not None:
            reader_sid, split = self._owner[segment_sid]
            for chunk in inner.records_of_current_split():
                out.add(reader_sid, ReaderGroupChunk(split.segment_id, chunk.next_offset, chunk.batch))
        for segment_sid in sorted(inner.finished_splits()):
            reader_sid, split = self._owner.pop(segment_sid)
            self._segment_caught_up.pop(segment_sid, None)
            segment_id = split.segment_id
            reader = self._readers.get(reader_sid)
            if reader is None:
                continue
            successors = self._successors(reader, segment_id)
            out.add(reader_sid, ReaderGroupChunk(segment_id, END_OF_SEGMENT, None, successors))
            self._own(reader, successors)
            if successors:
                LOG.info("reader %s took %s after segment %d", reader.reader_name, successors, segment_id)
        for reader_sid, reader in list(self._readers.items()):
            if reader.is_bounded and not any(owner == reader_sid for owner, _ in self._owner.values()):
                out.add_finished_split(reader_sid)
                del self._readers[reader_sid]
                self._paused.discard(reader_sid)
        self._report_caught_up(out)
        return out

    def _owned(self, reader_sid: str) -> list[PravegaSegmentSplit]:
        return [split for owner, split in self._owner.values() if owner == reader_sid]

    def _report_caught_up(self, out: RecordsBySplits[ReaderGroupChunk]) -> None:
        """A reader is caught up when it owns segments and each reported being at its tail."""
        for reader_sid in self._readers:
            if reader_sid in self._paused or reader_sid in out.finished_splits():
                continue
            owned = self._owned(reader_sid)
            out.set_caught_up(
                reader_sid,
                bool(owned) and all(self._segment_caught_up.get(s.split_id, False) for s in owned),
            )

    @override
    def pause_or_resume_splits(
        self,
        splits_to_pause: Sequence[PravegaReaderGroupSplit],
        splits_to_resume: Sequence[PravegaReaderGroupSplit],
    ) -> None:
        pause = [r.split_id for r in splits_to_pause if r.split_id in self._readers]
        resume = [r.split_id for r in splits_to_resume if r.split_id in self._paused]
        self._paused.update(pause)
        self._paused.difference_update(resume)
        self._segments.pause_or_resume_splits(
            [s for r in pause for s in self._owned(r)], [s for r in resume for s in self._owned(r)]
        )

    def _offline(self, reader_sid: str) -> None:
        self._readers.pop(reader_sid, None)
        self._paused.discard(reader_sid)
        mine = self._owned(reader_sid)
        for split in mine:
            del self._owner[split.split_id]
            self._segment_caught_up.pop(split.split_id, None)
        if mine:
            self._segments.handle_splits_changes(SplitsRemoval(mine))

    @override
    def wake_up(self) -> None:
        self._segments.wake_up()

    @override
    def close(self) -> None:
        self._segments.close()
        self._readers.clear()
        self._owner.clear()
        self._paused.clear()
        self._segment_caught_up.clear()
        if self._client is not None:
            self._client.close()
            self._client = None
