"""``KinesisSplitPlanner``: the time cuts that make every micro-batch replayable (docs/kinesis.md).

Per micro-batch the planner reads the service's clock ``C`` (the ``Date`` header of ListShards)
and picks the cut ``T = C - cutSafetyMarginMs`` (capped by ``endingTimestamp`` and
``maxTimeWindowPerTrigger``). An open shard's range is ``[its position, AT_TIMESTAMP T)``: up to,
not including, the first record in sequence order whose ``ApproximateArrivalTimestamp >= T``. A
closed shard is read to ``SHARD_END``. Both ends are pure functions of the shard's contents, since
every record that arrives after planning has a timestamp ``>= C >= T``; a retried task or a re-run
batch reads the same records. The chosen cuts are in the offset log.

A child shard's range stays empty while any of its parents is still in the plan, so it starts in a
later micro-batch than the one that read its parents to their end.

``maxRecordsPerTrigger`` / ``maxBytesPerTrigger`` are exact: the planner reads (on the driver) up to
that many records of each shard's range and moves the cut back to the timestamp of the first record
that does not fit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from typing_extensions import override

from connector_base import DataLossError
from connector_base.spark import Backlog, Position, ReadLimitOptions, SplitPlanner
from connector_base.spark.filters import ColumnFilter
from connectors.kinesis.client import AT_TIMESTAMP_TIMEOUT_S, kinesis_client
from connectors.kinesis.event_time import head_time, position_at_time
from connectors.kinesis.filter_pushdown import KinesisFilters
from connectors.kinesis.options import KinesisOptions
from connectors.kinesis.positions import PositionKind, ShardPosition
from connectors.kinesis.restore_check import check_kinesis_restore
from connectors.kinesis.shard_discovery import StreamSnapshot, call_with_retry, list_stream
from connectors.kinesis.split import KinesisShardSplit
from connectors.kinesis.split_reader import iterator_args, timestamp_ms

__all__ = ["KinesisSplitPlanner"]

LOG = logging.getLogger(__name__)

HOUR_MS = 3_600_000
SCAN_PAGE_LIMIT = 10_000


def window_cut(cut: int, pos: ShardPosition, first_ts: int | None, window_ms: int | None) -> int:
    """``cut`` bounded by ``maxTimeWindowPerTrigger``, counted from the first record at ``pos``.

    Counting from the first record (not from the position) skips an idle stretch at once, so a
    shard whose next record is more than one window ahead still makes progress.
    """
    if window_ms is None:
        return cut
    if first_ts is not None:
        return min(cut, first_ts + window_ms)
    if pos.kind is PositionKind.AT_TIMESTAMP and pos.timestamp_ms is not None:
        return min(cut, pos.timestamp_ms + window_ms)
    return cut


class KinesisSplitPlanner(SplitPlanner[KinesisShardSplit]):
    """Plans ``[start, end)`` per shard on the driver (streaming) or passes bounded splits through (batch).

    Threading: driver stream-reader thread only.
    """

    def __init__(self, options: KinesisOptions, streaming: bool) -> None:
        self.options = options
        self.streaming = streaming
        self._client: Any = None
        self._scans: dict[tuple[str, str, str], list[tuple[int, int]]] = {}
        self._max_records = options.max_records_per_trigger
        self._max_bytes = options.max_bytes_per_trigger
        """What a scan counts up to: this trigger's limits (``use_read_limits``), else the options'."""
        self.last_snapshot: StreamSnapshot | None = None
        self._retention_due = 0.0
        self._first_unread_ms: dict[str, int] = {}
        """Shard id -> arrival time of the first unread record, as the last probe saw it."""
        self._filters: KinesisFilters | None = None
        # event time (eventTime.alignment=cut, event_time.py), all refreshed by end_positions
        self._first_at: dict[tuple[str, str], tuple[int | None, bool]] = {}
        """(shard id, position) -> (arrival of the first record there, whether there is none)."""
        self._complete_ms: dict[str, int | None] = {}
        """Shard id -> every record the shard will ever hold before this time is in its range."""
        self._kept: set[str] = set()
        """Open shards kept at their position this plan because nothing is there to read."""
        self._full_ranges: dict[str, tuple[Position, Position]] = {}
        """Shard id -> its whole ``[start, end)`` before the cut (narrower ranges count from its scan)."""
        self._timed_out: set[str] = set()

    def check_restored(self, enumerator_state: object, splits: Mapping[str, KinesisShardSplit]) -> set[str]:
        """A restored offset must be of the stream the options name (see restore_check)."""
        return check_kinesis_restore(self.options, splits)

    @override
    def open(self) -> None:
        self._client = kinesis_client(self.options)

    # --- positions ----------------------------------------------------------------------------
    @override
    def start_position(self, split: KinesisShardSplit) -> Position:
        if self._filters is not None:
            return self._filters.start(split.start).to_json()
        return split.start.to_json()

    @override
    def push_filters(self, filters: Sequence[ColumnFilter]) -> None:
        self._filters = KinesisFilters.of(filters)

    @override
    def is_finished(self, split: KinesisShardSplit, position: Position) -> bool:
        pos = ShardPosition.from_json(position)
        if pos.is_shard_end:
            return True
        if split.end is not None and pos == split.end:
            return True
        ending = self.options.ending_timestamp_ms
        return ending is not None and pos == ShardPosition.at_timestamp(ending)

    def range_splits(
        self, split: KinesisShardSplit, start: Position, end: Position
    ) -> list[KinesisShardSplit]:
        """One split per range: a shard is read by one task, in sequence order."""
        return [split.with_range(ShardPosition.from_json(start), ShardPosition.from_json(end))]

    # --- planning -----------------------------------------------------------------------------
    @override
    def end_positions(self, splits: Mapping[str, tuple[KinesisShardSplit, Position]]) -> dict[str, Position]:
        if not self.streaming:
            return {sid: self._batch_end(s, pos).to_json() for sid, (s, pos) in splits.items()}
        self._scans.clear()
        self._first_at.clear()
        self._complete_ms.clear()
        self._kept.clear()
        self._full_ranges.clear()
        self._timed_out.clear()
        # the retention period is re-read at most every shardDiscoveryIntervalMs
        known = self.last_snapshot.retention_hours if self.last_snapshot is not None else None
        if self._retention_due <= time.monotonic():
            known = None
            self._retention_due = time.monotonic() + self.options.shard_discovery_interval_ms / 1000
        snapshot = list_stream(self.options, known)
        self.last_snapshot = snapshot
        closed = {s.shard_id for s in snapshot.shards if s.closed}
        listed = {s.shard_id for s in snapshot.shards}
        cut = snapshot.service_now_ms - self.options.safety_margin_ms
        ending = self.options.ending_timestamp_ms
        if ending is not None:
            cut = min(cut, ending)
        ends: dict[str, Position] = {}
        for sid, (split, raw) in splits.items():
            pos = ShardPosition.from_json(raw)
            self._check_retention(split, pos, snapshot)
            if self.is_finished(split, raw) or any(p in splits for p in split.parent_shard_ids):
                ends[sid] = raw
                self._kept.add(split.shard_id)  # no head: a child waiting for its parents holds no cut
                continue
            if sid in closed or split.closed or sid not in listed:
                end = ShardPosition.at_timestamp(ending) if ending is not None else ShardPosition.shard_end()
                ends[sid] = end.to_json()
                self._complete_ms[split.shard_id] = cut
                continue
            ends[sid] = self._open_shard_end(split, pos, cut, ending).to_json()
        return ends

    def _batch_end(self, split: KinesisShardSplit, start: Position) -> ShardPosition:
        """The end of a batch read's range; its start when pushed filters leave nothing to read."""
        end = split.end or ShardPosition.shard_end()
        f = self._filters
        if f is None:
            return end
        first = ShardPosition.from_json(start)
        end = f.end(end)
        if not f.keeps(split) or f.is_empty(first, end):
            LOG.info("pushed filters %s: shard %s not read", f.applied, split.shard_id)
            return first
        LOG.info("pushed filters %s: shard %s read in [%s, %s)", f.applied, split.shard_id, first, end)
        return end

    def _open_shard_end(
        self, split: KinesisShardSplit, pos: ShardPosition, cut: int, ending: int | None
    ) -> ShardPosition:
        first_ts, has_data = self._probe(split, pos, cut)
        cut = window_cut(cut, pos, first_ts, self.options.max_time_window_per_trigger_ms)
        sid = split.shard_id
        self._complete_ms[sid] = None if sid in self._timed_out else cut
        if ending is not None and cut >= ending:
            return ShardPosition.at_timestamp(ending)  # the last range of a bounded stream, even if empty
        if pos.kind is PositionKind.AT_TIMESTAMP and pos.timestamp_ms is not None and cut <= pos.timestamp_ms:
            return pos
        if not has_data or (first_ts is not None and first_ts >= cut):
            self._kept.add(sid)
            return pos  # nothing in the range: keep the position, so no empty micro-batch runs
        return ShardPosition.at_timestamp(cut)

    def _probe(self, split: KinesisShardSplit, pos: ShardPosition, cut: int) -> tuple[int | None, bool]:
        """``(timestamp of the first record at pos, whether the range may hold records)``."""
        page, behind = self._first_page(split, pos, limit=1)
        key = (split.shard_id, repr(pos.to_json()))
        if not page:
            self._first_unread_ms.pop(split.shard_id, None)
            self._first_at[key] = (None, behind == 0 and split.shard_id not in self._timed_out)
            return None, behind is None or behind > 0
        ts = timestamp_ms(page[0]["ApproximateArrivalTimestamp"])
        self._first_unread_ms[split.shard_id] = ts
        self._first_at[key] = (ts, False)
        return ts, ts < cut

    lag_by_time_only = True
    """Backlog lag (backlog.py) in time only: ``backlog`` counts records by reading them, up to the limits."""

    def time_lag_ms(
        self, ranges: Mapping[str, tuple[KinesisShardSplit, Position, Position]], probes_ms: Sequence[int]
    ) -> dict[str, int | None]:
        """``ReportsTimeLag`` (backlog.py): now minus the arrival of each shard's first unread record.

        No request: ``end_positions`` probed that record already. ``None`` for a shard with a range
        whose first record this planner has not seen (a closed shard read to its end).
        """
        now = int(time.time() * 1000)
        out: dict[str, int | None] = {}
        for sid, (_split, start, end) in ranges.items():
            first = self._first_unread_ms.get(sid)
            out[sid] = 0 if start == end else (max(0, now - first) if first is not None else None)
        return out

    def _iterator(self, split: KinesisShardSplit, pos: ShardPosition, fallback: bool) -> str | None:
        """A shard iterator at ``pos``; ``None`` when AT_TIMESTAMP timed out and ``fallback`` is off."""
        from botocore.exceptions import ReadTimeoutError

        what = f"GetShardIterator of shard {split.shard_id}"
        args = {**self.options.stream_args(), "ShardId": split.shard_id}
        if pos.kind is PositionKind.AT_TIMESTAMP:
            quick = kinesis_client(self.options, AT_TIMESTAMP_TIMEOUT_S)
            try:
                return call_with_retry(quick.get_shard_iterator, what, **args, **iterator_args(pos))[
                    "ShardIterator"
                ]
            except ReadTimeoutError:
                LOG.info("GetShardIterator %s of shard %s timed out", pos, split.shard_id)
                self._timed_out.add(split.shard_id)
                if not fallback:
                    return None
                pos = ShardPosition.trim_horizon()  # exact too: records before the start are skipped here
        return call_with_retry(self._client.get_shard_iterator, what, **args, **iterator_args(pos))[
            "ShardIterator"
        ]

    def _first_page(
        self, split: KinesisShardSplit, pos: ShardPosition, limit: int
    ) -> tuple[list[dict[str, Any]], int | None]:
        # a timed-out AT_TIMESTAMP probe counts as "no records yet": keeping a position is always safe
        it = self._iterator(split, pos, fallback=False)
        if it is None:
            return [], 0
        resp = call_with_retry(
            self._client.get_records, f"GetRecords of shard {split.shard_id}", ShardIterator=it, Limit=limit
        )
        records = resp.get("Records") or []
        if pos.kind is PositionKind.AT_TIMESTAMP:
            assert pos.timestamp_ms is not None
            records = [
                r for r in records if timestamp_ms(r["ApproximateArrivalTimestamp"]) >= pos.timestamp_ms
            ]
        return records, resp.get("MillisBehindLatest")

    def _check_retention(
        self, split: KinesisShardSplit, pos: ShardPosition, snapshot: StreamSnapshot
    ) -> None:
        if pos.kind is not PositionKind.AT_TIMESTAMP or pos == split.start:
            return
        assert pos.timestamp_ms is not None
        horizon = snapshot.service_now_ms - snapshot.retention_hours * HOUR_MS
        if pos.timestamp_ms >= horizon:
            return
        message = (
            f"shard {split.shard_id} of stream {split.stream}: position {pos} is older than the stream's "
            f"retention period ({snapshot.retention_hours} h); records after it may have expired"
        )
        if self.options.fail_on_data_loss:
            raise DataLossError(message + " (set failOnDataLoss=false to continue from TRIM_HORIZON)")
        LOG.warning("%s; continuing from TRIM_HORIZON (failOnDataLoss=false)", message)

    # --- admission control ------------------------------------------------------------------------
    def _scan(self, split: KinesisShardSplit, start: Position, end: Position) -> list[tuple[int, int]]:
        """``(timestamp ms, bytes)`` of the records of ``[start, end)``, at most the limits plus one."""
        key = (split.shard_id, repr(start), repr(end))
        if key in self._scans:
            return self._scans[key]
        if start == end:
            return []
        cap_records = (self._max_records or 0) + 1
        cap_bytes = self._max_bytes
        pos = ShardPosition.from_json(start)
        stop = ShardPosition.from_json(end)
        end_ms = stop.timestamp_ms if stop.kind is PositionKind.AT_TIMESTAMP else None
        out: list[tuple[int, int]] = []
        total = 0
        it = self._iterator(split, pos, fallback=True)
        skipping = pos.kind is PositionKind.AT_TIMESTAMP
        while it is not None:
            resp = call_with_retry(
                self._client.get_records,
                f"GetRecords of shard {split.shard_id}",
                ShardIterator=it,
                Limit=SCAN_PAGE_LIMIT,
            )
            records = resp.get("Records") or []
            for r in records:
                ts = timestamp_ms(r["ApproximateArrivalTimestamp"])
                if skipping and pos.timestamp_ms is not None and ts < pos.timestamp_ms:
                    continue
                skipping = False
                if end_ms is not None and ts >= end_ms:
                    it = None
                    break
                size = len(r["Data"]) + len(r["PartitionKey"])
                out.append((ts, size))
                total += size
                if len(out) >= cap_records and self._max_records is not None:
                    it = None
                    break
                if cap_bytes is not None and total > cap_bytes:
                    it = None
                    break
            else:
                if not records and resp.get("MillisBehindLatest") == 0:
                    break
                it = resp.get("NextShardIterator")
        self._scans[key] = out
        return out

    def _scanned(self, split: KinesisShardSplit, start: Position, end: Position) -> list[tuple[int, int]]:
        """``_scan`` of ``[start, end)``; a range the cut narrowed is counted from its whole range's scan.

        Exact for the limits: arrival times do not decrease in sequence order, so the records before
        ``AT_TIMESTAMP(t)`` are a prefix of the whole range's (and a capped scan stays over the cap).
        """
        full = self._full_ranges.get(split.shard_id)
        stop = ShardPosition.from_json(end)
        if full is None or full[0] != start or full[1] == end or stop.kind is not PositionKind.AT_TIMESTAMP:
            return self._scan(split, start, end)
        return [r for r in self._scan(split, start, full[1]) if r[0] < (stop.timestamp_ms or 0)]

    @override
    def use_read_limits(self, limits: ReadLimitOptions | None) -> None:
        # a catching-up batch takes the backlog.* maxima: count up to them, not the normal ones
        caps = (None, None) if limits is None else (limits.max_records, limits.max_bytes)
        if caps != (self._max_records, self._max_bytes):
            self._scans.clear()  # scans stop at the caps: one made under others would miscount
            self._max_records, self._max_bytes = caps

    @override
    def backlog(self, split: KinesisShardSplit, start: Position, end: Position) -> Backlog:
        if self._max_records is None and self._max_bytes is None:
            return Backlog()
        scanned = self._scanned(split, start, end)
        return Backlog(records=len(scanned), bytes=sum(b for _t, b in scanned))

    @override
    def cut(
        self,
        split: KinesisShardSplit,
        start: Position,
        end: Position,
        max_records: int | None,
        max_bytes: int | None,
    ) -> Position:
        scanned = self._scanned(split, start, end)
        count = 0
        total = 0
        for ts, size in scanned:
            if (max_records is not None and count + 1 > max_records) or (
                max_bytes is not None and total + size > max_bytes
            ):
                candidate = ShardPosition.at_timestamp(ts)
                first = ShardPosition.from_json(start)
                if (
                    first.kind is PositionKind.AT_TIMESTAMP
                    and first.timestamp_ms is not None
                    and ts <= first.timestamp_ms
                ):
                    return start
                if scanned and ts <= scanned[0][0]:
                    return start  # one timestamp holds more than the limit: cannot cut inside it
                return candidate.to_json()
            count += 1
            total += size
        return end

    # --- event time (eventTime.alignment=cut): arrival times, see event_time.py -------------------
    @override
    def positions_at_time(
        self, ranges: Mapping[str, tuple[KinesisShardSplit, Position, Position]], t_ms: int
    ) -> dict[str, Position]:
        out: dict[str, Position] = {}
        for sid, (split, start, end) in ranges.items():
            full = self._full_ranges.setdefault(split.shard_id, (start, end))
            if full[0] != start:
                self._full_ranges[split.shard_id] = (start, end)
            out[sid] = position_at_time(start, end, t_ms, partial(self._first_record, split, start, end))
        return out

    @override
    def times_at(self, positions: Mapping[str, tuple[KinesisShardSplit, Position]]) -> dict[str, int | None]:
        out: dict[str, int | None] = {}
        for sid, (split, pos) in positions.items():
            at_end = ShardPosition.from_json(pos).is_shard_end
            out[sid] = None if at_end else self._first_record(split, pos)[0]
        return out

    @override
    def head_times(self, ends: Mapping[str, tuple[KinesisShardSplit, Position]]) -> dict[str, int | None]:
        return {
            sid: head_time(end, self._complete_ms.get(s.shard_id), s.shard_id in self._kept)
            for sid, (s, end) in ends.items()
        }

    def _first_record(
        self, split: KinesisShardSplit, pos: Position, end: Position | None = None
    ) -> tuple[int | None, bool]:
        """``(arrival of the record at pos, whether the shard has none there)``; probed once a plan.

        Up to ``SHARD_END`` (a closed shard) the range is scanned instead, so an ``AT_TIMESTAMP``
        probe that is not answered (kinesalite, past the last record) still finds the shard done.
        """
        key = (split.shard_id, repr(pos))
        if key not in self._first_at and end is not None and ShardPosition.from_json(end).is_shard_end:
            scanned = self._scan(split, pos, end)
            self._first_at[key] = (scanned[0][0], False) if scanned else (None, True)
        if key not in self._first_at:
            page, behind = self._first_page(split, ShardPosition.from_json(pos), limit=1)
            if page:
                self._first_at[key] = (timestamp_ms(page[0]["ApproximateArrivalTimestamp"]), False)
            else:
                quiet = behind in (None, 0) and split.shard_id not in self._timed_out
                self._first_at[key] = (None, quiet)
        return self._first_at[key]

    @override
    def on_commit(self, positions: Mapping[str, tuple[KinesisShardSplit, Position]]) -> None:
        self._scans.clear()
