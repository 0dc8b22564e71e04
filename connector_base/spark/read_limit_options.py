"""The admission-control options of a streaming query (``maxRecordsPerTrigger`` and others), parsed.

:func:`~connector_base.spark.read_limits.admit` applies them to a micro-batch; planners are told
them through :meth:`~connector_base.spark.planner.SplitPlanner.use_read_limits`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from connector_base.errors import InvalidOptionError

__all__ = ["ReadLimitOptions", "parse_duration_ms", "parse_positive_int"]


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


_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_DURATION = re.compile(r"(-?[0-9]+)([a-z]+)?")


def parse_duration_ms(options: Mapping[str, str], key: str) -> int | None:
    """Parse an optional duration in the syntax of Spark's ``JavaUtils.timeStringAs`` (``maxTriggerDelay``).

    An integer with an optional unit right after it (``us``, ``ms``, ``s``, ``m``, ``min``, ``h``,
    ``d``; none means milliseconds), case and surrounding blanks ignored: ``500``, ``250ms``, ``15s``,
    ``2m``, ``1d``. Microseconds are truncated to whole milliseconds, as Spark does.
    """
    raw = _get(options, key)
    if raw is None:
        return None
    m = _DURATION.fullmatch(raw.strip().lower())
    unit = m.group(2) if m is not None else None
    if m is None or (unit is not None and unit != "us" and unit not in _UNITS_MS):
        raise InvalidOptionError(
            key, raw, "a duration: an integer with an optional unit us, ms, s, m, min, h or d (15s, 2m)"
        )
    n = int(m.group(1))
    if unit == "us":
        return -(-n // 1000) if n < 0 else n // 1000  # truncated toward zero, as TimeUnit.toMillis
    return n * _UNITS_MS[unit or "ms"]


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
    return replace(opts, **changes)
