"""Admission control: how much of the available backlog one micro-batch takes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connector_base.errors import InvalidOptionError
from connector_base.spark.planner import Backlog, Position, SplitPlanner

__all__ = ["ReadLimitOptions", "admit", "parse_positive_int", "parse_duration_ms"]


def parse_positive_int(options: Mapping[str, str], key: str) -> int | None:
    """Parse an optional option that must be a positive integer."""
    raw = _get(options, key)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise InvalidOptionError(key, raw, "a positive integer") from None
    if value < 1:
        raise InvalidOptionError(key, raw, "a positive integer")
    return value


_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000}


def parse_duration_ms(options: Mapping[str, str], key: str) -> int | None:
    """Parse an optional duration: milliseconds as a number, or with a unit (``500ms``, ``15s``, ``2m``)."""
    raw = _get(options, key)
    if raw is None:
        return None
    text = raw.strip().lower()
    for unit in sorted(_UNITS_MS, key=len, reverse=True):
        if text.endswith(unit) and text[: -len(unit)].strip().isdigit():
            return int(text[: -len(unit)]) * _UNITS_MS[unit]
    if text.isdigit():
        return int(text)
    raise InvalidOptionError(key, raw, "a duration such as 500, 500ms, 15s or 2m")


def _get(options: Mapping[str, str], key: str) -> str | None:
    if key in options:
        return options[key]
    lowered = key.lower()
    for k, v in options.items():
        if k.lower() == lowered:
            return v
    return None


@dataclass(frozen=True, slots=True)
class ReadLimitOptions:
    """The admission-control settings of a streaming query (from the source's options)."""

    max_records: int | None = None
    max_bytes: int | None = None
    max_files: int | None = None
    min_records: int | None = None
    max_trigger_delay_ms: int | None = None

    def __post_init__(self) -> None:
        if (
            self.min_records is not None
            and self.max_records is not None
            and self.min_records > self.max_records
        ):
            raise InvalidOptionError(
                "minRecordsPerTrigger",
                self.min_records,
                f"at most the maximum per trigger ({self.max_records})",
            )

    @property
    def is_unlimited(self) -> bool:
        """Whether no maximum is set."""
        return self.max_records is None and self.max_bytes is None and self.max_files is None

    def spark_default(self) -> Any:
        """The ``ReadLimit`` for ``getDefaultReadLimit`` (Spark accepts one; all set limits apply)."""
        from pyspark.sql.streaming.datasource import (
            ReadAllAvailable,
            ReadMaxBytes,
            ReadMaxFiles,
            ReadMaxRows,
            ReadMinRows,
        )

        if self.max_records is not None:
            return ReadMaxRows(self.max_records)
        if self.max_files is not None:
            return ReadMaxFiles(self.max_files)
        if self.max_bytes is not None:
            return ReadMaxBytes(self.max_bytes)
        if self.min_records is not None:
            return ReadMinRows(self.min_records)
        return ReadAllAvailable()

    def merged_with_spark_limit(self, limit: Any) -> ReadLimitOptions | None:
        """The limits to apply for Spark's ``limit`` (``None``: read all available)."""
        from pyspark.sql.streaming.datasource import (
            ReadAllAvailable,
            ReadMaxBytes,
            ReadMaxFiles,
            ReadMaxRows,
            ReadMinRows,
        )

        if limit is None or isinstance(limit, ReadAllAvailable):
            return None
        merged = self
        if isinstance(limit, ReadMaxRows):
            merged = _replace(merged, max_records=_min(merged.max_records, int(limit.max_rows)))
        elif isinstance(limit, ReadMaxFiles):
            merged = _replace(merged, max_files=_min(merged.max_files, int(limit.max_files)))
        elif isinstance(limit, ReadMaxBytes):
            merged = _replace(merged, max_bytes=_min(merged.max_bytes, int(limit.max_bytes)))
        elif isinstance(limit, ReadMinRows):
            merged = _replace(merged, min_records=int(limit.min_rows))
        return merged


def _min(a: int | None, b: int) -> int:
    return b if a is None else min(a, b)


def _replace(opts: ReadLimitOptions, **changes: Any) -> ReadLimitOptions:
    from dataclasses import replace

    return replace(opts, **changes)


def admit(
    planner: SplitPlanner[Any],
    ranges: Mapping[str, tuple[Any, Position, Position]],
    limits: ReadLimitOptions | None,
) -> dict[str, Position]:
    """Choose each split's end for one micro-batch: ``split_id -> (split, start, available end)``.

    Record and byte maxima are spread over splits in proportion to their backlog (as Spark's
    Kafka source spreads ``maxOffsetsPerTrigger``); ``max_files`` admits whole splits in order.
    Some progress is always made when data is available.
    """
    ends = {sid: end for sid, (_split, _start, end) in ranges.items()}
    if limits is None or limits.is_unlimited:
        return ends
    backlogs: dict[str, Backlog] = {
        sid: planner.backlog(split, start, end) for sid, (split, start, end) in ranges.items()
    }
    pending = [sid for sid in ranges if not backlogs[sid].is_empty and ranges[sid][1] != ranges[sid][2]]
    result = {sid: ranges[sid][1] for sid in ranges}
    for sid in ranges:
        if sid not in pending:
            result[sid] = ends[sid]
    if limits.max_files is not None:
        pending = pending[: limits.max_files]
    quotas_records = _proportional(pending, backlogs, limits.max_records, "records")
    quotas_bytes = _proportional(pending, backlogs, limits.max_bytes, "bytes")
    progressed = False
    for sid in pending:
        split, start, end = ranges[sid]
        max_r = quotas_records.get(sid) if limits.max_records is not None else None
        max_b = quotas_bytes.get(sid) if limits.max_bytes is not None else None
        cut = end if max_r is None and max_b is None else planner.cut(split, start, end, max_r, max_b)
        result[sid] = cut
        progressed = progressed or cut != start
    if pending and not progressed:
        sid = pending[0]
        split, start, end = ranges[sid]
        cut = planner.cut(split, start, end, limits.max_records or 1, limits.max_bytes)
        result[sid] = cut if cut != start else end
    return result


def _proportional(
    pending: list[str], backlogs: Mapping[str, Backlog], maximum: int | None, field: str
) -> dict[str, int]:
    if maximum is None or not pending:
        return {}
    sizes = {sid: getattr(backlogs[sid], field) for sid in pending}
    known = {sid: s for sid, s in sizes.items() if s is not None}
    total = sum(known.values())
    quotas: dict[str, int] = {}
    if total <= maximum:
        return {sid: (s if s is not None else maximum) for sid, s in sizes.items()}
    remaining = maximum
    for sid in pending:
        s = sizes[sid]
        if s is None:
            quotas[sid] = 0
            continue
        q = (maximum * s) // total if total else 0
        quotas[sid] = q
        remaining -= q
    # hand out the rounding remainder, largest backlog first, so the sum is exactly the maximum
    for sid in sorted(known, key=lambda k: -known[k]):
        if remaining <= 0:
            break
        if quotas[sid] < known[sid]:
            quotas[sid] += 1
            remaining -= 1
    return quotas
