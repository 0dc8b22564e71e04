"""Backlog on Spark (FLIP-309's idea with Spark's lever): bigger micro-batches while catching up.

A Spark source cannot change the trigger or the checkpoint interval; every micro-batch writes the
offset and commit logs (and an exactly-once sink commits a transaction), so the batch size is what
a source can change. ``BacklogSizing`` runs in ``latestOffset`` on the driver:

* it measures the lag of the planned ranges from what the planner already fetched: records and bytes
  (``SplitPlanner.backlog``), pending splits (files), and milliseconds where the planner answers
  ``ReportsTimeLag`` (Kafka: offsets by timestamp; Kinesis: the first unread record's arrival);
* with hysteresis it decides whether the query is in backlog: it enters when some measure reaches
  its ``backlog.enter*`` threshold and leaves when every measure is at or below its ``backlog.exit*``
  one; an enumerator that calls ``set_is_processing_backlog(True)`` (the hybrid source) also counts;
* in backlog, the per-trigger maxima become ``backlog.maxRecordsPerTrigger`` /
  ``backlog.maxBytesPerTrigger``; ``getDefaultReadLimit`` announces the larger value (Spark reads it
  once per run) and the normal maxima are applied here outside backlog, so ``Trigger.AvailableNow``
  honours both;
* a planner that counts records by reading them (capped) is told, before it is measured, to count
  up to the backlog maxima and entry thresholds (``counting_limits``, ``SplitPlanner.use_read_limits``);
* ``report`` is what ``reportLatestOffset`` returns: latest positions, lag, the worst split and the
  backlog flag. None of it goes into an end offset (it changes while no data arrives).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from connector_base.errors import InvalidOptionError
from connector_base.spark.planner import Backlog, Position, SplitPlanner
from connector_base.spark.read_limit_options import ReadLimitOptions, parse_duration_ms, parse_positive_int

__all__ = [
    "BacklogOptions",
    "backlog_sizing_for",
    "take_backlog_options",
    "default_read_limit",
    "BacklogSizing",
    "LagFigures",
    "ReportsTimeLag",
    "SplitLag",
]

LOG = logging.getLogger(__name__)

PREFIX = "backlog."
MAX_RECORDS = "backlog.maxRecordsPerTrigger"
MAX_BYTES = "backlog.maxBytesPerTrigger"
OPTION_NAMES = (
    MAX_RECORDS,
    MAX_BYTES,
    *(f"backlog.{way}{m}" for m in ("Records", "Bytes", "Splits", "LagMs") for way in ("enter", "exit")),
)
"""Every ``backlog.*`` option."""
DEFAULT_EXIT_FRACTION = 10
"""Without an exit threshold and a normal maximum, the exit is the enter threshold divided by this."""


_Ranges = dict[str, tuple[Any, Position, Position]]
"""``split_id -> (split, position, available end)``."""


@dataclass(frozen=True, slots=True)
class SplitLag:
    """How far one split is behind; ``None`` where the source cannot tell cheaply."""

    records: int | None = None
    bytes: int | None = None
    ms: int | None = None


@runtime_checkable
class ReportsTimeLag(Protocol):
    """A planner that can tell, cheaply, how far behind in time each split is.

    A planner whose ``backlog`` reads records to count them (bounded by the limits, so no lag) sets
    a class attribute ``lag_by_time_only = True``: its lag is then measured in time only.
    """

    def time_lag_ms(
        self, ranges: Mapping[str, tuple[Any, Position, Position]], probes_ms: Sequence[int]
    ) -> dict[str, int | None]:
        """For ``split_id -> (split, position, available end)``: milliseconds the position is behind.

        Exact where the system says it (the age of the first unread record); otherwise the largest of
        ``probes_ms`` the split is known to be behind by (a lower bound), 0 when it is behind by none
        of them; ``None`` when unknown. Splits with nothing to read may be left out (0).
        """
        ...


@dataclass(frozen=True, slots=True)
class _Hysteresis:
    """Enter at ``enter`` or above, leave at ``exit`` or below (``exit < enter``)."""

    option: str
    enter: int
    exit: int


def _thresholds(
    options: Mapping[str, str],
    measure: str,
    default_enter: int | None,
    default_exit: int | None,
    parse: Callable[[Mapping[str, str], str], int | None],
) -> _Hysteresis | None:
    enter_key, exit_key = f"backlog.enter{measure}", f"backlog.exit{measure}"
    enter = parse(options, enter_key)
    exit_ = parse(options, exit_key) if _has(options, exit_key) else None
    if enter is None:
        if exit_ is not None:
            raise InvalidOptionError(exit_key, exit_, f"to be set together with {enter_key}")
        enter = default_enter
    if enter is None:
        return None
    if exit_ is None:
        fits = default_exit is not None and default_exit < enter
        exit_ = default_exit if fits and default_exit is not None else enter // DEFAULT_EXIT_FRACTION
    if exit_ >= enter:
        raise InvalidOptionError(exit_key, exit_, f"a value below {enter_key} ({enter})")
    return _Hysteresis(enter_key, enter, exit_)


def _has(options: Mapping[str, str], key: str) -> bool:
    return any(k.lower() == key.lower() for k in options)


def _non_negative_int(options: Mapping[str, str], key: str) -> int | None:
    for k, raw in options.items():
        if k.lower() == key.lower():
            if not raw.strip().isdigit():
                raise InvalidOptionError(key, raw, "a non-negative integer")
            return int(raw)
    return None


@dataclass(frozen=True, slots=True)
class BacklogOptions:
    """The ``backlog.*`` options of a streaming query (parsed once, validated at ``start()``)."""

    max_records: int | None = None
    max_bytes: int | None = None
    records: _Hysteresis | None = None
    bytes: _Hysteresis | None = None
    splits: _Hysteresis | None = None
    lag_ms: _Hysteresis | None = None

    @property
    def enabled(self) -> bool:
        """Whether any backlog option is set."""
        parts = (self.max_records, self.max_bytes, self.records, self.bytes, self.splits, self.lag_ms)
        return any(x is not None for x in parts)

    @classmethod
    def parse(cls, options: Mapping[str, str], normal: ReadLimitOptions) -> BacklogOptions:
        """Parse ``backlog.*`` next to the normal limits ``normal`` (the source's own maxima).

        Defaults: with ``backlog.maxRecordsPerTrigger`` and no records thresholds, the query enters
        backlog when one backlog batch is waiting and leaves when the lag fits one normal batch;
        likewise for bytes.
        """
        known = {k.lower() for k in OPTION_NAMES}
        for key, value in options.items():
            if key.lower() not in known:
                raise InvalidOptionError(key, value, f"one of the backlog options {list(OPTION_NAMES)}")
        max_records = parse_positive_int(options, MAX_RECORDS)
        max_bytes = parse_positive_int(options, MAX_BYTES)
        for key, big, small, name in (
            (MAX_RECORDS, max_records, normal.max_records, "records"),
            (MAX_BYTES, max_bytes, normal.max_bytes, "bytes"),
        ):
            if big is None:
                continue
            if small is None:
                raise InvalidOptionError(
                    key, big, f"to be set only with a normal per-trigger {name} maximum, which it raises"
                )
            if big < small:
                raise InvalidOptionError(
                    key, big, f"at least the normal per-trigger {name} maximum ({small})"
                )
        return cls(
            max_records=max_records,
            max_bytes=max_bytes,
            records=_thresholds(options, "Records", max_records, normal.max_records, _non_negative_int),
            bytes=_thresholds(options, "Bytes", max_bytes, normal.max_bytes, _non_negative_int),
            splits=_thresholds(options, "Splits", None, None, _non_negative_int),
            lag_ms=_thresholds(options, "LagMs", None, None, parse_duration_ms),
        )

    def spark_limits(self, normal: ReadLimitOptions) -> ReadLimitOptions:
        """The limits announced to Spark (``getDefaultReadLimit``): the larger of normal and backlog."""
        return replace(
            normal,
            max_records=_max(normal.max_records, self.max_records),
            max_bytes=_max(normal.max_bytes, self.max_bytes),
        )


def _max(a: int | None, b: int | None) -> int | None:
    if a is None or b is None:
        return a if b is None else b
    return max(a, b)


def _sum(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


@dataclass(frozen=True, slots=True)
class LagFigures:
    """The lag of one query at one trigger (what ``reportLatestOffset`` publishes)."""

    records: int | None
    bytes: int | None
    ms: int | None
    pending_splits: int
    worst_split: str | None
    worst: SplitLag = field(default_factory=SplitLag)

    def to_json(self) -> dict[str, Any]:
        """JSON primitives."""
        worst = None
        if self.worst_split is not None:
            worst = {
                "id": self.worst_split,
                "records": self.worst.records,
                "bytes": self.worst.bytes,
                "ms": self.worst.ms,
            }
        return {
            "records": self.records,
            "bytes": self.bytes,
            "ms": self.ms,
            "pendingSplits": self.pending_splits,
            "maxSplit": worst,
        }


class BacklogSizing:
    """Per query on the driver: measures lag, keeps the backlog flag, sizes micro-batches.

    Threading: the driver's stream-reader thread only.
    """

    def __init__(self, options: BacklogOptions, clock: Callable[[], float] = time.time) -> None:
        self._options = options
        self._clock = clock
        self._in_backlog = False
        self._report: dict[str, Any] | None = None
        self._measured: tuple[SplitPlanner[Any], _Ranges, LagFigures] | None = None
        self._times: dict[str, int | None] = {}

    @property
    def in_backlog(self) -> bool:
        """The flag as of the last trigger."""
        return self._in_backlog

    def measure(
        self,
        planner: SplitPlanner[Any],
        ranges: Mapping[str, tuple[Any, Position, Position]],
        times: Mapping[str, int | None] | None = None,
    ) -> LagFigures:
        """The lag of ``split_id -> (split, position, available end)`` from the planner.

        ``times``: the milliseconds per split when known already (else the planner is asked).
        """
        lags: dict[str, SplitLag] = {}
        if times is None:
            times = {}
            if isinstance(planner, ReportsTimeLag):
                times = planner.time_lag_ms(ranges, self._time_probes())
        by_time_only = getattr(planner, "lag_by_time_only", False)
        for sid, (split, start, end) in ranges.items():
            b = Backlog() if by_time_only else planner.backlog(split, start, end)
            lags[sid] = SplitLag(b.records, b.bytes, times.get(sid, 0 if start == end else None))
        pending = sum(1 for sid, (_s, a, e) in ranges.items() if a != e and not _empty(lags[sid]))
        worst = max(lags, key=lambda s: _severity(lags[s]), default=None)
        if worst is not None and _severity(lags[worst]) == (0, 0, 0):
            worst = None
        return LagFigures(
            _sum([x.records for x in lags.values()]),
            _sum([x.bytes for x in lags.values()]),
            max((x.ms for x in lags.values() if x.ms is not None), default=None),
            pending,
            worst,
            lags[worst] if worst is not None else SplitLag(),
        )

    def _time_probes(self) -> list[int]:
        h = self._options.lag_ms
        return [] if h is None else sorted({h.exit, h.enter})

    def update(
        self,
        planner: SplitPlanner[Any],
        ranges: Mapping[str, tuple[Any, Position, Position]],
        enumerator_backlog: bool,
    ) -> LagFigures:
        """Measure and move the flag (hysteresis); ``enumerator_backlog`` forces backlog."""
        opts = self._options
        self._times = {}
        if isinstance(planner, ReportsTimeLag):
            self._times = planner.time_lag_ms(ranges, self._time_probes())
        figures = self.measure(planner, ranges, self._times)
        checks = [
            (opts.records, figures.records),
            (opts.bytes, figures.bytes),
            (opts.splits, figures.pending_splits),
            (opts.lag_ms, figures.ms),
        ]
        known = [(h, v) for h, v in checks if h is not None and v is not None]
        was = self._in_backlog
        if enumerator_backlog:
            self._in_backlog = True
        elif not was:
            self._in_backlog = any(v >= h.enter for h, v in known)
        else:
            self._in_backlog = not all(v <= h.exit for h, v in known)
        if self._in_backlog != was:
            LOG.info(
                "%s backlog: lag %s records, %s bytes, %s ms, %d splits pending%s",
                "entering" if self._in_backlog else "leaving",
                figures.records,
                figures.bytes,
                figures.ms,
                figures.pending_splits,
                " (the enumerator reports backlog)" if enumerator_backlog else "",
            )
        self._measured = (planner, dict(ranges), figures)
        self._report = None
        return figures

    def limits(self, merged: ReadLimitOptions | None) -> ReadLimitOptions | None:
        """The limits of this trigger: Spark's ``merged`` limits, raised to the backlog maxima in backlog.

        ``merged`` already applies the normal maxima (Spark passes the larger, announced one).
        ``None`` (read all available) stays ``None``.
        """
        if merged is None or not self._in_backlog:
            return merged
        opts = self._options
        return replace(
            merged,
            max_records=opts.max_records if opts.max_records is not None else merged.max_records,
            max_bytes=opts.max_bytes if opts.max_bytes is not None else merged.max_bytes,
        )

    def counting_limits(self, merged: ReadLimitOptions | None) -> ReadLimitOptions | None:
        """How far a planner counts this trigger (``SplitPlanner.use_read_limits``), given before
        ``update``: Spark's ``merged`` limits raised to the backlog maxima and entry thresholds, so a
        planner that counts by reading (capped) shows the lag the decision compares with the entry
        threshold, and scans far enough for a batch of the backlog size. ``None`` stays ``None``,
        and so does each maximum ``merged`` lacks (no cap where no limit is in force).
        """
        if merged is None:
            return None
        opts = self._options
        return replace(
            merged,
            max_records=_largest(merged.max_records, opts.max_records, opts.records),
            max_bytes=_largest(merged.max_bytes, opts.max_bytes, opts.bytes),
        )

    def report(self, plan: Any = None) -> dict[str, Any] | None:
        """What ``reportLatestOffset`` returns (``None`` before the first trigger).

        ``plan``: the bridge's driver plan; its ``splits`` hold the positions the batch ends at.
        ``lag`` is what remains after this batch (as Spark's Kafka source's offsetsBehindLatest), so a
        batch that catches up publishes 0; ``lagAtTrigger`` is what the backlog decision saw. The
        milliseconds after the batch are 0 where it reaches the available end, else as at the trigger.
        """
        if self._measured is None:
            return None
        if self._report is not None:
            return self._report
        planner, ranges, before = self._measured
        after = before
        planned: Mapping[str, Any] | None = None if plan is None else plan.splits
        if planned is not None:
            left = {}
            for sid, (split, start, end) in ranges.items():
                entry = planned.get(sid)
                left[sid] = (split, start if entry is None else entry.pos, end)
            times = {sid: (0 if a == e else self._times.get(sid)) for sid, (_s, a, e) in left.items()}
            after = self.measure(planner, left, times)
        self._report = {
            "latest": {sid: end for sid, (_s, _a, end) in ranges.items()},
            "lag": after.to_json(),
            "lagAtTrigger": before.to_json(),
            "backlog": self._in_backlog,
            "measuredAtMs": int(self._clock() * 1000),
        }
        return self._report


def _largest(normal: int | None, backlog: int | None, entry: _Hysteresis | None) -> int | None:
    if normal is None:
        return None
    values = [v for v in (backlog, None if entry is None else entry.enter) if v is not None]
    return max([normal, *values])


def _empty(lag: SplitLag) -> bool:
    return lag.records == 0 or (lag.records is None and lag.bytes == 0)


def _severity(lag: SplitLag) -> tuple[int, int, int]:
    return (lag.ms or 0, lag.records or 0, lag.bytes or 0)


def take_backlog_options(ds: Any) -> dict[str, str]:
    """The ``backlog.*`` options of the data source ``ds``, taken out of ``ds.options`` once.

    The connector never sees them (its own option check would refuse them); the bridge calls this
    before it builds a source, in every mode.
    """
    taken: dict[str, str] | None = ds.__dict__.get("_backlog_options")
    if taken is None:
        taken = {k: v for k, v in ds.options.items() if k.lower().startswith(PREFIX)}
        for key in taken:
            del ds.options[key]
        ds.__dict__["_backlog_options"] = taken
    return taken


def _options_of(ds: Any) -> BacklogOptions:
    return BacklogOptions.parse(take_backlog_options(ds), ds.read_limit_options())


def default_read_limit(ds: Any) -> Any:
    """``getDefaultReadLimit`` of the bridge: the source's limits, raised to the backlog maxima."""
    normal: ReadLimitOptions = ds.read_limit_options()
    return _options_of(ds).spark_limits(normal).spark_default()


def backlog_sizing_for(ds: Any) -> BacklogSizing:
    """A ``BacklogSizing`` for the bridge's data source ``ds`` (``InvalidOptionError`` on bad options)."""
    return BacklogSizing(_options_of(ds))
