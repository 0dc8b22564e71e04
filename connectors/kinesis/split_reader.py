"""``KinesisShardSplitReader``: GetShardIterator + GetRecords over the assigned shards, exactly their range.

A split ``[start, end)`` is read as follows (the proof is in docs/kinesis.md):

* the iterator starts at ``start`` (``TRIM_HORIZON``, ``AT_TIMESTAMP``, ``AFTER_SEQUENCE_NUMBER``);
  records before the first one with ``ApproximateArrivalTimestamp >= start`` are skipped on the
  client too, so a service that rounds the iterator's timestamp down cannot add records;
* it stops before the first record with ``ApproximateArrivalTimestamp >= end`` (an ``AT_TIMESTAMP``
  end), at the shard's end (``NextShardIterator`` is null), or at the tip of the shard (an empty page
  with ``MillisBehindLatest == 0``) when the split has an end: the planner chose the end so that
  every record before it is already visible and every later record is after it.

Throttling (``ProvisionedThroughputExceededException`` and friends) retries the same call with the
same iterator after an exponential backoff, so nothing is lost or read twice; an expired iterator is
re-created after the last record fetched.

Event time: each fetch reports which shards are caught up (``set_caught_up``): a GetRecords call
that returns no record with ``MillisBehindLatest == 0`` (or none given) is at the tip of the shard;
a page with records, or one that is behind, is not. Splits paused by watermark alignment are not
asked (their iterator is kept, so they resume right after the last record fetched).
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from typing_extensions import override

from connector_base import ConnectorError, RecordsBySplits, SplitReader, SplitsAddition, SplitsChange
from connectors.kinesis.client import AT_TIMESTAMP_TIMEOUT_S, THROTTLING_ERRORS, error_code, kinesis_client
from connectors.kinesis.options import KinesisOptions
from connectors.kinesis.positions import PositionKind, ShardPosition
from connectors.kinesis.split import KinesisShardSplit

__all__ = ["KinesisShardSplitReader", "ShardPage", "Backoff", "iterator_args", "timestamp_ms"]

LOG = logging.getLogger(__name__)

IDLE_WAIT_S = 0.2
"""How long an unbounded split reader waits at the tip of every shard before asking again."""

ShardPage = list[dict[str, Any]]
"""The records of one GetRecords call (botocore dicts; timestamps as epoch seconds)."""


def timestamp_ms(raw: Any) -> int:
    """Integer milliseconds of a raw ``ApproximateArrivalTimestamp`` (epoch seconds or a datetime)."""
    if isinstance(raw, datetime):
        return round(raw.timestamp() * 1000)
    return round(float(raw) * 1000)


def iterator_args(position: ShardPosition) -> dict[str, Any]:
    """GetShardIterator arguments for ``position`` (not for ``SHARD_END``)."""
    match position.kind:
        case PositionKind.TRIM_HORIZON:
            return {"ShardIteratorType": "TRIM_HORIZON"}
        case PositionKind.AT_TIMESTAMP:
            assert position.timestamp_ms is not None
            ts = datetime.fromtimestamp(position.timestamp_ms / 1000, tz=UTC)
            return {"ShardIteratorType": "AT_TIMESTAMP", "Timestamp": ts}
        case PositionKind.AFTER_SEQUENCE_NUMBER:
            return {
                "ShardIteratorType": "AFTER_SEQUENCE_NUMBER",
                "StartingSequenceNumber": position.sequence_number,
            }
        case _:
            raise ValueError(f"no iterator for {position}")


class Backoff:
    """Exponential backoff with jitter for throttled calls; ``wait`` is interruptible by an event."""

    def __init__(self, base_s: float = 0.05, cap_s: float = 2.0, max_attempts: int = 60) -> None:
        self.base_s = base_s
        self.cap_s = cap_s
        self.max_attempts = max_attempts
        self.attempts = 0

    def next_delay(self) -> float:
        """The next delay; raises ``ConnectorError`` after ``max_attempts`` throttled attempts in a row."""
        self.attempts += 1
        if self.attempts > self.max_attempts:
            raise ConnectorError(f"still throttled after {self.max_attempts} attempts")
        return random.uniform(0.5, 1.0) * min(self.cap_s, self.base_s * 2 ** (self.attempts - 1))

    def reset(self) -> None:
        """A call succeeded."""
        self.attempts = 0


class _Cursor:
    __slots__ = (
        "split",
        "iterator",
        "skipping",
        "start_ms",
        "end_ms",
        "last_fetched",
        "backoff",
        "not_before",
        "at_tip",
    )

    def __init__(self, split: KinesisShardSplit) -> None:
        self.split = split
        self.iterator: str | None = None
        self.skipping = split.start.kind is PositionKind.AT_TIMESTAMP
        self.start_ms = split.start.timestamp_ms
        self.end_ms = split.end.timestamp_ms if split.end is not None else None
        self.last_fetched: str | None = None
        self.backoff = Backoff()
        self.not_before = 0.0
        self.at_tip: bool | None = None  # what the last GetRecords said (None: no answer yet)

    @property
    def bounded(self) -> bool:
        return self.split.end is not None


class KinesisShardSplitReader(SplitReader[ShardPage, KinesisShardSplit]):
    """Reads its shards round-robin, one GetRecords call per shard and ``fetch``.

    Threading: runs on one fetcher thread; ``wake_up`` interrupts the idle and backoff waits.
    """

    def __init__(self, options: KinesisOptions) -> None:
        self._options = options
        self._client: Any = None
        self._cursors: dict[str, _Cursor] = {}
        self._paused: set[str] = set()
        self._wake = threading.Event()
        self.throttled = 0

    def _kinesis(self) -> Any:
        if self._client is None:
            self._client = kinesis_client(self._options)
        return self._client

    @override
    def handle_splits_changes(self, change: SplitsChange[KinesisShardSplit]) -> None:
        for split in change.splits:
            if isinstance(change, SplitsAddition):
                self._cursors[split.split_id] = _Cursor(split)
            else:
                self._cursors.pop(split.split_id, None)
                self._paused.discard(split.split_id)

    @override
    def pause_or_resume_splits(
        self, splits_to_pause: Sequence[KinesisShardSplit], splits_to_resume: Sequence[KinesisShardSplit]
    ) -> None:
        self._paused.update(s.split_id for s in splits_to_pause if s.split_id in self._cursors)
        self._paused.difference_update(s.split_id for s in splits_to_resume)

    @override
    def fetch(self) -> RecordsBySplits[ShardPage]:
        import time

        out: RecordsBySplits[ShardPage] = RecordsBySplits()
        if not self._cursors:
            self._wait(IDLE_WAIT_S)
            return out
        progressed = False
        soonest = None
        for sid, cursor in list(self._cursors.items()):
            if sid in self._paused:
                continue
            now = time.monotonic()
            if cursor.not_before > now:
                soonest = cursor.not_before if soonest is None else min(soonest, cursor.not_before)
                continue
            cursor.at_tip = None
            page, done, moved = self._fetch_one(cursor)
            if page:
                out.add(sid, page)
            if done:
                out.add_finished_split(sid)
                del self._cursors[sid]
            elif cursor.at_tip is not None:
                out.set_caught_up(sid, cursor.at_tip)
            progressed = progressed or moved or done
        if not progressed:
            delay = IDLE_WAIT_S if soonest is None else max(0.0, soonest - time.monotonic())
            self._wait(min(delay, IDLE_WAIT_S))
        return out

    def _fetch_one(self, cursor: _Cursor) -> tuple[ShardPage, bool, bool]:
        """One GetRecords call: ``(records in range, split done, made progress)``."""
        import time

        from botocore.exceptions import ClientError

        split = cursor.split
        if split.start.is_shard_end:
            return [], True, True
        client = self._kinesis()
        try:
            if cursor.iterator is None:
                position = (
                    ShardPosition.after_sequence_number(cursor.last_fetched)
                    if cursor.last_fetched is not None
                    else split.start
                )
                cursor.iterator = self._shard_iterator(split.shard_id, position)
                if cursor.iterator is None:
                    return [], True, True
            resp = client.get_records(
                ShardIterator=cursor.iterator, Limit=self._options.max_records_per_fetch
            )
        except ClientError as e:
            code = error_code(e)
            if code in THROTTLING_ERRORS:
                self.throttled += 1
                delay = cursor.backoff.next_delay()
                LOG.debug("shard %s throttled (%s), retrying in %.2fs", split.shard_id, code, delay)
                cursor.not_before = time.monotonic() + delay
                return [], False, False
            if code == "ExpiredIteratorException":
                cursor.iterator = None
                return [], False, True
            raise ConnectorError(
                f"reading shard {split.shard_id} of stream {split.stream} from {split.start} failed: "
                f"{code}: {e}"
            ) from e
        cursor.backoff.reset()
        records: ShardPage = resp.get("Records") or []
        next_iterator = resp.get("NextShardIterator")
        behind = resp.get("MillisBehindLatest")
        if records:
            cursor.last_fetched = records[-1]["SequenceNumber"]
        cursor.at_tip = not records and not behind  # behind is 0, or not given
        selected, reached_end = self._select(cursor, records)
        cursor.iterator = next_iterator
        done = reached_end or next_iterator is None
        if not done and not records and cursor.bounded and behind == 0:
            done = True  # the tip of the shard: every record of the range has been read
        return selected, done, bool(records) or done

    def _shard_iterator(self, shard_id: str, position: ShardPosition) -> str | None:
        from botocore.exceptions import ReadTimeoutError

        args = {**self._options.stream_args(), "ShardId": shard_id, **iterator_args(position)}
        if position.kind is PositionKind.AT_TIMESTAMP:
            try:
                quick = kinesis_client(self._options, AT_TIMESTAMP_TIMEOUT_S)
                return quick.get_shard_iterator(**args)["ShardIterator"]  # type: ignore[no-any-return]
            except ReadTimeoutError:
                # the records before the start are skipped on the client, so TRIM_HORIZON is exact too
                LOG.info(
                    "GetShardIterator AT_TIMESTAMP of shard %s timed out; reading from TRIM_HORIZON", shard_id
                )
                args.update(iterator_args(ShardPosition.trim_horizon()))
        return self._kinesis().get_shard_iterator(**args)["ShardIterator"]  # type: ignore[no-any-return]

    @staticmethod
    def _select(cursor: _Cursor, records: ShardPage) -> tuple[ShardPage, bool]:
        if not records:
            return records, False
        begin = 0
        if cursor.skipping:
            start_ms = cursor.start_ms
            assert start_ms is not None
            while (
                begin < len(records)
                and timestamp_ms(records[begin]["ApproximateArrivalTimestamp"]) < start_ms
            ):
                begin += 1
            if begin < len(records):
                cursor.skipping = False
        end_ms = cursor.end_ms
        if end_ms is None:
            return records[begin:] if begin else records, False
        for i in range(begin, len(records)):
            if timestamp_ms(records[i]["ApproximateArrivalTimestamp"]) >= end_ms:
                return records[begin:i], True
        return records[begin:], False

    def _wait(self, seconds: float) -> None:
        self._wake.wait(seconds)
        self._wake.clear()

    @override
    def wake_up(self) -> None:
        self._wake.set()

    @override
    def close(self) -> None:
        self._cursors.clear()
