"""The controller's metadata: scopes, streams, epochs, segment key ranges, transactions.

Segment ids follow Pravega: ``id = epoch << 32 | number``, where ``number`` counts segments of the
stream from 0 and ``epoch`` is the epoch that created the segment. A segment's qualified name is
``scope/stream/<number>.#epoch.<epoch>``; a transaction's segment appends
``#transaction.<32 hex digits of the transaction id>``. A transaction id carries the epoch it was
created in in its top 32 bits.

Threading: none; called on the emulator's asyncio loop only.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .storage import SegmentStorage

__all__ = [
    "MetadataError",
    "NotFoundError",
    "AlreadyExistsError",
    "PreconditionError",
    "StreamConfiguration",
    "SegmentRecord",
    "Stream",
    "TxnState",
    "Metadata",
    "segment_name",
    "transaction_segment_name",
    "segment_id",
]


class MetadataError(Exception):
    """Base of controller metadata failures."""


class NotFoundError(MetadataError):
    """A scope, stream, segment or transaction that does not exist."""


class AlreadyExistsError(MetadataError):
    """A scope or stream that already exists."""


class PreconditionError(MetadataError):
    """A request that the current state does not allow (for example scaling a sealed stream)."""


def segment_id(epoch: int, number: int) -> int:
    """The 64-bit segment id of segment ``number`` created in ``epoch``."""
    return (epoch << 32) | number


def segment_name(scope: str, stream: str, seg_id: int) -> str:
    """The qualified segment name for a segment id."""
    return f"{scope}/{stream}/{seg_id & 0xFFFFFFFF}.#epoch.{seg_id >> 32}"


def transaction_segment_name(parent: str, txn_id: int) -> str:
    """The name of a transaction's segment for ``parent``."""
    return f"{parent}#transaction.{txn_id:032x}"


@dataclass
class StreamConfiguration:
    """A stream's configuration as recorded from createStream/updateStream (policies not enforced)."""

    scale_type: int = 0  # 0 fixed, 1 by KB/s, 2 by events/s
    target_rate: int = 0
    scale_factor: int = 0
    min_segments: int = 1
    retention_type: int = 0  # 0 none, 1 time, 2 size
    retention_param: int = 0
    retention_max: int = 0
    tags: list[str] = field(default_factory=list)


@dataclass
class SegmentRecord:
    """A segment's key range and lineage."""

    id: int
    min_key: float
    max_key: float
    predecessors: list[int] = field(default_factory=list)
    sealed_in_epoch: int | None = None


class TxnState(Enum):
    """Transaction states as reported by checkTransactionState."""

    OPEN = 1
    COMMITTING = 2
    COMMITTED = 3
    ABORTING = 4
    ABORTED = 5


@dataclass
class Transaction:
    """A transaction: its epoch's segments and its state."""

    id: int
    epoch: int
    segments: list[int]
    state: TxnState = TxnState.OPEN
    lease_ms: int = 0


@dataclass
class Stream:
    """A stream: configuration, epochs (segment ids per epoch), segments, head cut, transactions."""

    scope: str
    name: str
    config: StreamConfiguration
    epochs: list[list[int]] = field(default_factory=list)
    epoch_times: list[int] = field(default_factory=list)
    segments: dict[int, SegmentRecord] = field(default_factory=dict)
    head: dict[int, int] = field(default_factory=dict)  # segment id -> start offset
    sealed: bool = False
    next_number: int = 0
    transactions: dict[int, Transaction] = field(default_factory=dict)

    @property
    def current_epoch(self) -> int:
        """The latest epoch."""
        return len(self.epochs) - 1

    def active(self) -> list[SegmentRecord]:
        """Segments of the latest epoch, ordered by key range."""
        return sorted((self.segments[i] for i in self.epochs[-1]), key=lambda s: s.min_key)

    def qualified(self, seg_id: int) -> str:
        """The qualified name of one of this stream's segments."""
        return segment_name(self.scope, self.name, seg_id)


class Metadata:
    """Scopes and streams; segment data changes go through the shared :class:`SegmentStorage`."""

    def __init__(self, storage: SegmentStorage) -> None:
        self.storage = storage
        self.scopes: dict[str, dict[str, Stream]] = {}

    # ---- scopes ------------------------------------------------------------------------

    def create_scope(self, scope: str) -> None:
        """Create a scope; raise :class:`AlreadyExistsError` if present."""
        _check_name(scope)
        if scope in self.scopes:
            raise AlreadyExistsError(scope)
        self.scopes[scope] = {}
        self.storage.mark_dirty()

    def delete_scope(self, scope: str) -> None:
        """Delete an empty scope."""
        streams = self._scope(scope)
        if any(not name.startswith("_") for name in streams):
            raise PreconditionError(f"scope {scope} is not empty")
        del self.scopes[scope]
        self.storage.mark_dirty()

    def _scope(self, scope: str) -> dict[str, Stream]:
        if scope not in self.scopes:
            raise NotFoundError(f"scope {scope}")
        return self.scopes[scope]

    # ---- streams -----------------------------------------------------------------------

    def stream(self, scope: str, name: str) -> Stream:
        """Return a stream or raise :class:`NotFoundError`."""
        stream = self._scope(scope).get(name)
        if stream is None:
            raise NotFoundError(f"stream {scope}/{name}")
        return stream

    def create_stream(self, scope: str, name: str, config: StreamConfiguration) -> Stream:
        """Create a stream with ``config.min_segments`` equal key ranges in epoch 0."""
        _check_name(name)
        streams = self._scope(scope)
        if name in streams:
            raise AlreadyExistsError(f"stream {scope}/{name}")
        count = max(config.min_segments, 1)
        stream = Stream(scope, name, config)
        ids = []
        for number in range(count):
            record = SegmentRecord(segment_id(0, number), number / count, (number + 1) / count)
            stream.segments[record.id] = record
            self.storage.create(stream.qualified(record.id))
            stream.head[record.id] = 0
            ids.append(record.id)
        stream.epochs.append(ids)
        stream.epoch_times.append(_now_ms())
        stream.next_number = count
        streams[name] = stream
        self.storage.mark_dirty()
        return stream

    def update_stream(self, scope: str, name: str, config: StreamConfiguration) -> None:
        """Record a new configuration (the segment count is not changed: scale explicitly)."""
        self.stream(scope, name).config = config
        self.storage.mark_dirty()

    def seal_stream(self, scope: str, name: str) -> None:
        """Seal every active segment; the stream takes no more writes."""
        stream = self.stream(scope, name)
        for record in stream.active():
            self.storage.seal(stream.qualified(record.id))
        stream.sealed = True
        self.storage.mark_dirty()

    def delete_stream(self, scope: str, name: str) -> None:
        """Delete a sealed stream and its segments."""
        stream = self.stream(scope, name)
        if not stream.sealed:
            raise PreconditionError(f"stream {scope}/{name} is not sealed")
        for seg_id in stream.segments:
            if stream.qualified(seg_id) in self.storage.segments:
                self.storage.delete(stream.qualified(seg_id))
        del self.scopes[scope][name]
        self.storage.mark_dirty()

    def successors(self, stream: Stream, seg_id: int) -> list[tuple[SegmentRecord, list[int]]]:
        """Segments created by the scale that sealed ``seg_id``, each with all its predecessors."""
        if seg_id not in stream.segments:
            raise NotFoundError(f"segment {seg_id} of {stream.scope}/{stream.name}")
        return [
            (record, list(record.predecessors))
            for record in stream.segments.values()
            if seg_id in record.predecessors
        ]

    def segments_between(self, stream: Stream, start: dict[int, int], end: dict[int, int]) -> list[int]:
        """Ids of the segments holding data between two stream cuts (empty: head / tail)."""
        start_ids = set(start) or set(stream.head)
        for seg in set(start) | set(end):
            if seg not in stream.segments:
                raise NotFoundError(f"segment {seg} of {stream.scope}/{stream.name}")
        result: set[int] = set()
        pending = list(start_ids)
        while pending:
            seg = pending.pop()
            if seg in result:
                continue
            result.add(seg)
            if seg in end:
                continue  # the end cut stops the walk in this segment
            if end and self._after_cut(stream, seg, end):
                result.discard(seg)
                continue
            pending.extend(record.id for record, _ in self.successors(stream, seg))
        return sorted(result)

    def _after_cut(self, stream: Stream, seg: int, cut: dict[int, int]) -> bool:
        """True when ``seg`` descends from a segment of ``cut`` (so lies beyond the cut)."""
        pending = list(stream.segments[seg].predecessors)
        seen: set[int] = set()
        while pending:
            current = pending.pop()
            if current in cut:
                return True
            if current not in seen:
                seen.add(current)
                pending.extend(stream.segments[current].predecessors)
        return False

    def segments_at(self, stream: Stream, timestamp: int) -> dict[int, int]:
        """Segment id -> offset to start reading at ``timestamp`` (0 or earlier: the head)."""
        if timestamp <= stream.epoch_times[0]:
            return dict(stream.head)
        epoch = max(i for i, t in enumerate(stream.epoch_times) if t <= timestamp)
        head_epoch = min(seg >> 32 for seg in stream.head) if stream.head else 0
        if epoch < head_epoch:
            return dict(stream.head)
        return {seg: stream.head.get(seg, 0) for seg in stream.epochs[epoch]}

    def scale(self, scope: str, name: str, sealed: list[int], ranges: list[tuple[float, float]]) -> int:
        """Seal ``sealed`` and replace them by segments covering ``ranges`` in a new epoch.

        The new ranges must exactly cover the sealed segments' union. Returns the new epoch.
        """
        stream = self.stream(scope, name)
        if stream.sealed:
            raise PreconditionError(f"stream {scope}/{name} is sealed")
        active = {record.id for record in stream.active()}
        if not sealed or not set(sealed) <= active:
            raise PreconditionError(
                f"segments {sealed} are not all active in {scope}/{name} (active: {active})"
            )
        if any(txn.state == TxnState.OPEN for txn in stream.transactions.values()):
            raise PreconditionError(
                f"stream {scope}/{name} has open transactions; the emulator scales only without them"
            )
        ranges = sorted(ranges)
        old = sorted((stream.segments[i] for i in sealed), key=lambda r: r.min_key)
        if not _same_cover([(r.min_key, r.max_key) for r in old], ranges):
            raise PreconditionError(f"new ranges {ranges} do not cover the sealed segments' ranges exactly")
        epoch = stream.current_epoch + 1
        new_ids = []
        for low, high in ranges:
            record = SegmentRecord(segment_id(epoch, stream.next_number), low, high)
            stream.next_number += 1
            record.predecessors = [r.id for r in old if r.min_key < high and low < r.max_key]
            stream.segments[record.id] = record
            self.storage.create(stream.qualified(record.id))
            new_ids.append(record.id)
        for seg_id in sealed:
            self.storage.seal(stream.qualified(seg_id))
            stream.segments[seg_id].sealed_in_epoch = epoch
        stream.epochs.append(sorted((active - set(sealed)) | set(new_ids)))
        stream.epoch_times.append(_now_ms())
        self.storage.mark_dirty()
        return epoch

    def truncate(self, scope: str, name: str, cut: dict[int, int]) -> None:
        """Make ``cut`` the stream's head; earlier segments are truncated to their end."""
        stream = self.stream(scope, name)
        for seg_id, offset in cut.items():
            if seg_id not in stream.segments:
                raise PreconditionError(f"segment {seg_id} is not part of {scope}/{name}")
            if offset < 0:
                raise PreconditionError(f"offset {offset} for segment {seg_id} is negative")
        covered = sorted((stream.segments[i].min_key, stream.segments[i].max_key) for i in cut)
        if not _same_cover(covered, [(0.0, 1.0)]):
            raise PreconditionError(f"stream cut {cut} does not cover the key space exactly once")
        ancestors: set[int] = set()
        pending = [p for seg in cut for p in stream.segments[seg].predecessors]
        while pending:
            seg = pending.pop()
            if seg not in ancestors:
                ancestors.add(seg)
                pending.extend(stream.segments[seg].predecessors)
        for seg_id, offset in cut.items():
            self.storage.truncate(stream.qualified(seg_id), offset)
        for seg_id in ancestors:
            qualified = stream.qualified(seg_id)
            if qualified in self.storage.segments:
                segment = self.storage.segments[qualified]
                self.storage.truncate(qualified, segment.length)
        stream.head = dict(cut)
        self.storage.mark_dirty()

    # ---- transactions --------------------------------------------------------------------

    def create_transaction(self, scope: str, name: str, lease_ms: int) -> Transaction:
        """Open a transaction on the current epoch and create its segments."""
        stream = self.stream(scope, name)
        if stream.sealed:
            raise PreconditionError(f"stream {scope}/{name} is sealed")
        epoch = stream.current_epoch
        # Bit 63 stays clear: the Rust client rebuilds the id as ``high << 64 | low as u128``, which
        # sign-extends a negative low half and corrupts the id.
        txn_id = (epoch << 96) | (secrets.randbits(32) << 64) | secrets.randbits(63)
        txn = Transaction(txn_id, epoch, [r.id for r in stream.active()], lease_ms=lease_ms)
        for seg_id in txn.segments:
            self.storage.create(transaction_segment_name(stream.qualified(seg_id), txn_id))
        stream.transactions[txn_id] = txn
        self.storage.mark_dirty()
        return txn

    def transaction(self, scope: str, name: str, txn_id: int) -> Transaction:
        """Return a transaction or raise :class:`NotFoundError`."""
        txn = self.stream(scope, name).transactions.get(txn_id)
        if txn is None:
            raise NotFoundError(f"transaction {txn_id:032x} on {scope}/{name}")
        return txn

    def commit_transaction(self, scope: str, name: str, txn_id: int) -> None:
        """Merge the transaction's segments into their parents (idempotent once committed)."""
        stream = self.stream(scope, name)
        txn = self.transaction(scope, name, txn_id)
        if txn.state == TxnState.COMMITTED:
            return
        if txn.state != TxnState.OPEN:
            raise PreconditionError(f"transaction {txn_id:032x} is {txn.state.name}")
        for seg_id in txn.segments:
            parent = stream.qualified(seg_id)
            source = transaction_segment_name(parent, txn_id)
            self.storage.seal(source)
            target = self.storage.get(parent)
            if target.sealed:  # sealed by seal_stream after the transaction began
                raise PreconditionError(f"segment {parent} is sealed; transaction cannot commit")
            self.storage.merge(parent, source)
        txn.state = TxnState.COMMITTED
        self.storage.mark_dirty()

    def abort_transaction(self, scope: str, name: str, txn_id: int) -> None:
        """Drop the transaction's segments (idempotent once aborted)."""
        stream = self.stream(scope, name)
        txn = self.transaction(scope, name, txn_id)
        if txn.state == TxnState.ABORTED:
            return
        if txn.state != TxnState.OPEN:
            raise PreconditionError(f"transaction {txn_id:032x} is {txn.state.name}")
        for seg_id in txn.segments:
            source = transaction_segment_name(stream.qualified(seg_id), txn_id)
            if source in self.storage.segments:
                self.storage.delete(source)
        txn.state = TxnState.ABORTED
        self.storage.mark_dirty()

    # ---- persistence ---------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """JSON primitives for the data directory's snapshot."""
        return {
            "scopes": {
                scope: [_stream_to_json(stream) for stream in streams.values()]
                for scope, streams in self.scopes.items()
            }
        }

    def load_json(self, data: dict[str, Any]) -> None:
        """Restore what :meth:`to_json` wrote."""
        for scope, streams in data.get("scopes", {}).items():
            self.scopes[scope] = {}
            for item in streams:
                stream = _stream_from_json(scope, item)
                self.scopes[scope][stream.name] = stream


def _check_name(name: str) -> None:
    if not name or "/" in name or len(name) > 255:
        raise PreconditionError(f"invalid name {name!r}")


def _same_cover(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> bool:
    def merged(ranges: list[tuple[float, float]]) -> list[tuple[float, float]] | None:
        out: list[tuple[float, float]] = []
        for low, high in sorted(ranges):
            if low >= high:
                return None
            if out and abs(out[-1][1] - low) < 1e-9:
                out[-1] = (out[-1][0], high)
            elif out and low < out[-1][1] - 1e-9:
                return None  # overlap
            else:
                out.append((low, high))
        return out

    ma, mb = merged(a), merged(b)
    if ma is None or mb is None or len(ma) != len(mb):
        return False
    return all(abs(x[0] - y[0]) < 1e-9 and abs(x[1] - y[1]) < 1e-9 for x, y in zip(ma, mb, strict=True))


def _now_ms() -> int:
    return int(time.time() * 1000)


def _stream_to_json(stream: Stream) -> dict[str, Any]:
    return {
        "name": stream.name,
        "config": stream.config.__dict__,
        "epochs": stream.epochs,
        "epoch_times": stream.epoch_times,
        "segments": [
            [r.id, r.min_key, r.max_key, r.predecessors, r.sealed_in_epoch] for r in stream.segments.values()
        ],
        "head": [[k, v] for k, v in stream.head.items()],
        "sealed": stream.sealed,
        "next_number": stream.next_number,
        "transactions": [
            [str(t.id), t.epoch, t.segments, t.state.value, t.lease_ms] for t in stream.transactions.values()
        ],
    }


def _stream_from_json(scope: str, item: dict[str, Any]) -> Stream:
    stream = Stream(scope, item["name"], StreamConfiguration(**item["config"]))
    stream.epochs = item["epochs"]
    stream.epoch_times = item["epoch_times"]
    for seg_id, low, high, preds, sealed_in in item["segments"]:
        stream.segments[seg_id] = SegmentRecord(seg_id, low, high, preds, sealed_in)
    stream.head = {k: v for k, v in item["head"]}
    stream.sealed = item["sealed"]
    stream.next_number = item["next_number"]
    for txn_id, epoch, segs, state, lease in item["transactions"]:
        stream.transactions[int(txn_id)] = Transaction(int(txn_id), epoch, segs, TxnState(state), lease)
    return stream
