"""``EventTimeCut``: admission of a micro-batch by an event-time cut (``eventTime.alignment=cut``).

Spark's watermark is the largest event time of a batch minus the delay, applied from the next
batch on; a split that lags behind the others has its rows dropped as late. The cut stops that at
the source: for each micro-batch the driver picks one time ``T`` and every non-idle split reads
from its position up to its first record with event time ``>= T``::

    event time ->        T_prev                 T
    split 0  |###########|======================|.......   (head further on)
    split 1  |#####|=============================|....      (head further on)
    split 2  |##########|=================| head            (read to its head: T <= head + 1 + maxDrift)
    idle     |####| head, unmoved for idleTimeout: does not hold T back

    #: read in earlier batches   =: this batch   .: later batches

``T`` never decreases; it is the largest time whose records fit the batch's read limit
(``maxRecordsPerTrigger`` and the like, applied again after the cut, never reading past it), and
at most the slowest non-idle split's newest record plus ``alignment.maxDrift``. The ranges stay
ordinary ``[start, end)`` positions, so a re-run batch reads the same records; ``T`` and each
split's event time go into the offset (version 2). A split that shows up with records older than
the previous cut (a new split, or an idle one that wakes up with old data) is reported, since
Spark may drop them as late, and fails the query with ``eventTime.failOnLateSplit=true``.

Threading: the driver's stream-reader thread only (as the bridge that calls it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from connector_base.errors import ConnectorError
from connector_base.spark.event_time_options import EventTimeOptions
from connector_base.spark.offsets import EventTimeMark
from connector_base.spark.planner import Position, SplitPlanner
from connector_base.spark.read_limit_options import ReadLimitOptions
from connector_base.spark.read_limits import admit

__all__ = ["EventTimeCut", "LateSplitError"]

LOG = logging.getLogger(__name__)

MAX_SEARCH_PROBES = 48
"""Binary-search steps for the read limit's cut (2**48 ms is thousands of years)."""

Ranges = Mapping[str, tuple[Any, Position, Position]]
"""``split_id -> (split, start, available end)``, as the bridge's admission control takes them."""


class LateSplitError(ConnectorError):
    """A split holds records older than the cut and ``eventTime.failOnLateSplit=true``."""


class EventTimeCut:
    """Chooses the cut of each micro-batch and remembers which splits are idle.

    The offset is the only durable state: ``T`` is read back from the ``start`` offset of every
    batch, so a restarted driver continues from the logged cut. Idleness is measured on the driver
    clock since this process saw a split's head last move (after a restart every split starts
    non-idle, which only delays the cut).
    """

    def __init__(self, options: EventTimeOptions, clock: Callable[[], float] = time.monotonic) -> None:
        self.options = options
        self._clock = clock
        self._seen: dict[str, tuple[Position, float]] = {}
        self._idle: set[str] = set()
        self._late: dict[str, dict[str, int | None]] = {}
        self._cut_ms: int | None = None
        self._prev: EventTimeMark | None = None
        self._ranges: dict[str, tuple[Any, Position, Position]] = {}
        self._cut_ends: dict[str, Position] = {}
        self._heads: dict[str, int | None] = {}

    # --- per batch ------------------------------------------------------------------------------
    def bound(
        self,
        planner: SplitPlanner[Any],
        start: Mapping[str, Any],
        ranges: Ranges,
        limits: ReadLimitOptions | None,
        final: bool = False,
    ) -> dict[str, tuple[Any, Position, Position]]:
        """``ranges`` with each end moved back to the split's first record at or after the cut.

        ``final``: the ends are all the data there will be (``Trigger.AvailableNow``'s target), so a
        split that has read to its end is idle at once.
        """
        self._prev = EventTimeMark.of_offset(start)
        t_prev = self._prev.cut_ms if self._prev is not None else None
        self._ranges = dict(ranges)
        idle = self._idle_splits(ranges, final)
        active = {sid: r for sid, r in ranges.items() if sid not in idle}
        pending = {sid: r for sid, r in active.items() if r[1] != r[2]}
        woken = {sid: r for sid, r in pending.items() if self._may_be_late(sid, start)}
        self._idle = idle
        if self._prev is not None:  # what the offset knows of each split, for a restarted planner
            logged = {
                sid: (split, pos, t)
                for sid, (split, pos, _end) in ranges.items()
                if (t := self._prev.split_times.get(sid)) is not None
            }
            if logged:
                planner.note_split_times(logged)
        self._check_late(planner, woken, t_prev)
        self._cut_ms, self._cut_ends, self._heads = t_prev, {}, {}
        if not pending:
            return dict(ranges)
        self._heads = planner.head_times({sid: (s, end) for sid, (s, _p, end) in active.items()})
        tops = [h + 1 + self.options.max_drift_ms for h in self._heads.values() if h is not None]
        if not tops:
            return dict(ranges)
        hi = min(tops)
        floor = t_prev
        if floor is None:  # the first batch of a query: from the oldest unread record
            firsts = [
                t
                for t in planner.times_at({s: (r[0], r[1]) for s, r in pending.items()}).values()
                if t is not None
            ]
            floor = min(firsts) if firsts else hi
        hi = max(hi, floor)
        cut = self._largest_fitting(planner, pending, floor, hi, limits)
        ends = planner.positions_at_time(pending, cut)
        if cut < hi and all(ends[sid] == r[1] for sid, r in pending.items()):
            # more records in one millisecond than the limit: take the next one, the limit trims it
            nexts = planner.times_at({s: (r[0], r[1]) for s, r in pending.items()})
            known = [t for t in nexts.values() if t is not None]
            cut = min(hi, max(cut, min(known) + 1)) if known else hi
            ends = planner.positions_at_time(pending, cut)
        self._cut_ms, self._cut_ends = cut, dict(ends)
        out = dict(ranges)
        for sid, (split, pos, _end) in pending.items():
            out[sid] = (split, pos, ends[sid])
        LOG.debug("event-time cut %d (previous %s, bound %d), %d idle splits", cut, t_prev, hi, len(idle))
        return out

    def mark(self, chosen: Mapping[str, Position]) -> EventTimeMark | None:
        """The cut and each split's event time for the offset that ends at ``chosen``."""
        if self._cut_ms is None:
            return self._prev
        previous = self._prev.split_times if self._prev is not None else {}
        times: dict[str, int | None] = {}
        for sid, (_split, pos, end) in self._ranges.items():
            at = chosen.get(sid, pos)
            head = self._heads.get(sid)
            if sid in self._cut_ends and at == self._cut_ends[sid]:
                # every record before ``at`` is older than the cut; at the split's end, than its head
                times[sid] = min(self._cut_ms, head + 1) if at == end and head is not None else self._cut_ms
            elif at == end and head is not None:
                times[sid] = min(self._cut_ms, head + 1)
            else:
                times[sid] = previous.get(sid)
        return EventTimeMark(self._cut_ms, times)

    def report(self) -> dict[str, Any]:
        """For ``reportLatestOffset``: the cut, the idle splits and the late splits seen so far."""
        return {"cut": self._cut_ms, "idleSplits": sorted(self._idle), "lateSplits": dict(self._late)}

    # --- parts ----------------------------------------------------------------------------------
    def _idle_splits(self, ranges: Ranges, final: bool) -> set[str]:
        now = self._clock()
        timeout_s = self.options.idle_timeout_ms / 1000.0
        idle = set()
        for sid, (_split, pos, end) in ranges.items():
            seen = self._seen.get(sid)
            if seen is None or seen[0] != end:
                self._seen[sid] = seen = (end, now)
            if pos == end and (final or now - seen[1] >= timeout_s):
                idle.add(sid)
        for sid in set(self._seen) - set(ranges):
            del self._seen[sid]
        return idle

    def _largest_fitting(
        self, planner: SplitPlanner[Any], pending: Ranges, lo: int, hi: int, limits: ReadLimitOptions | None
    ) -> int:
        """The largest cut in ``[lo, hi]`` whose records fit ``limits`` (``lo`` when none does)."""
        if limits is None or limits.is_unlimited or _fits(planner, pending, hi, limits):
            return hi
        for _ in range(MAX_SEARCH_PROBES):
            if hi - lo <= 1:
                break
            mid = (lo + hi) // 2
            if _fits(planner, pending, mid, limits):
                lo = mid
            else:
                hi = mid
        return lo

    def _may_be_late(self, sid: str, start: Mapping[str, Any]) -> bool:
        """Whether ``sid``'s records did not hold the previous cut back, so may be older than it.

        That is a split new in this batch, one idle until now, or one that has read nothing and has
        no event time yet: discovered while empty (a new partition before its producer writes),
        it held no cut back however soon its first records came.
        """
        entry = start.get("splits", {}).get(sid)
        if entry is None or sid in self._idle:
            return True
        never_read = "pos" in entry and entry["pos"] == entry.get("first")
        return never_read and self._prev is not None and self._prev.split_times.get(sid) is None

    def _check_late(self, planner: SplitPlanner[Any], woken: Ranges, t_prev: int | None) -> None:
        """Report splits that may be late (``_may_be_late``) and hold records older than the previous cut."""
        if t_prev is None or not woken:
            return
        ends = planner.positions_at_time(woken, t_prev)
        late = {sid: r for sid, r in woken.items() if ends[sid] != r[1]}
        if not late:
            return
        firsts = planner.times_at({sid: (r[0], r[1]) for sid, r in late.items()})
        for sid, (split, pos, _end) in late.items():
            records = planner.backlog(split, pos, ends[sid]).records
            behind = None if firsts.get(sid) is None else t_prev - int(firsts[sid] or 0)
            self._late[sid] = {"records": records, "behindMs": behind, "cut": t_prev}
            message = (
                f"split {sid} holds {records if records is not None else 'some'} records older than the "
                f"event-time cut {t_prev} ms (the oldest by {behind} ms); Spark drops those older than "
                "its watermark as late"
            )
            if self.options.fail_on_late_split:
                raise LateSplitError(
                    message + ". Set eventTime.failOnLateSplit=false to read them and continue."
                )
            LOG.warning("%s (eventTime.failOnLateSplit=false: reading them)", message)


def _fits(planner: SplitPlanner[Any], pending: Ranges, cut: int, limits: ReadLimitOptions) -> bool:
    """Whether the read limit admits every split's records older than ``cut`` whole.

    Asked of ``admit`` itself, the admission that runs after the cut: a record it trimmed (Spark's
    share arithmetic in doubles floors ``43 * (31 / 43)`` to 30) would be older than the cut and so
    late in the next batch, which the cut exists to prevent.
    """
    ends = planner.positions_at_time(pending, cut)
    bounded = {sid: (split, pos, ends[sid]) for sid, (split, pos, _end) in pending.items()}
    admitted = admit(planner, bounded, limits)
    return all(admitted[sid] == ends[sid] for sid in bounded)
