"""The admission-control options of a streaming query (``maxRecordsPerTrigger`` and others), parsed.

:func:`~connector_base.spark.read_limits.admit` applies them to a micro-batch; planners are told
them through :meth:`~connector_base.spark.planner.SplitPlanner.use_read_limits`.
"""

from __future__ import annotations

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
    return replace(opts, **changes)
