"""Filter pushdown for batch reads: Spark's filters in a neutral, picklable form.

Spark (pyspark >= 4.1) offers a batch reader the filters of a query once, at planning, through
``DataSourceReader.pushFilters`` -- only when ``spark.sql.python.filterPushdown.enabled`` is true,
and a reader that overrides ``pushFilters`` while it is false fails planning
(``DATA_SOURCE_PUSHDOWN_DISABLED``). The planning worker cannot see that setting, so the bridge
returns a pushdown-capable reader only when the read option ``filterPushdown=true`` asks for it
(and the connector handles at least one kind of filter).

Here Spark's filter objects become ``ColumnFilter``s. A connector says for each one how far it
handles it (``FilterSupport``): ``EXACT`` filters are answered by the planner alone and not returned
to Spark; ``NARROWS`` filters let the planner read less but stay with Spark, which evaluates them
on every row it gets; ``NONE`` filters are returned untouched.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from connector_base.errors import InvalidOptionError

__all__ = [
    "PUSHDOWN_OPTION",
    "ColumnFilter",
    "FilterSupport",
    "millisecond_bound",
    "pushdown_requested",
    "to_column_filter",
]

PUSHDOWN_OPTION = "filterPushdown"
"""The read option that asks for a pushdown-capable batch reader."""

_OPS = {
    "EqualTo": "=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
    "In": "in",
}
_NULL_OPS = {"IsNull": "is_null", "IsNotNull": "is_not_null"}


class FilterSupport(Enum):
    """How far a connector answers one filter."""

    NONE = "none"
    """Not used: returned to Spark."""
    NARROWS = "narrows"
    """Used to read less, and returned to Spark, which still evaluates it on every row."""
    EXACT = "exact"
    """Answered by the plan alone: every row read satisfies it; not returned to Spark."""


@dataclass(frozen=True)
class ColumnFilter:
    """``column op value`` (``op`` one of ``= > >= < <=``), ``column in values``, or
    ``column is_null`` / ``column is_not_null`` (no values).

    ``column`` is the dotted column path; values are plain Python values as Spark gives them
    (``datetime`` for timestamps, timezone-aware in UTC when Spark's are naive).
    """

    column: str
    op: str
    values: tuple[Any, ...]

    @property
    def value(self) -> Any:
        """The single value of a comparison."""
        return self.values[0]


def _normalise(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        # Spark hands TimestampType literals to Python as naive local datetimes
        return value.astimezone(dt.UTC)
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC)
    return value


def to_column_filter(spark_filter: Any) -> ColumnFilter | None:
    """The neutral form of one of Spark's filters; ``None`` for the kinds not translated
    (``Not``, ``EqualNullSafe``, string matches, ...), which then stay with Spark."""
    kind = type(spark_filter).__name__
    if kind in _NULL_OPS:
        return ColumnFilter(".".join(spark_filter.attribute), _NULL_OPS[kind], ())
    op = _OPS.get(kind)
    if op is None:
        return None
    column = ".".join(spark_filter.attribute)
    if op == "in":
        return ColumnFilter(column, op, tuple(_normalise(v) for v in spark_filter.value))
    return ColumnFilter(column, op, (_normalise(spark_filter.value),))


def pushdown_requested(options: Any) -> bool:
    """``filterPushdown`` (case-insensitive key) as a boolean; default false."""
    raw = next((str(v) for k, v in dict(options).items() if k.lower() == PUSHDOWN_OPTION.lower()), "false")
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise InvalidOptionError(
            PUSHDOWN_OPTION,
            raw,
            "true or false (true also needs spark.sql.python.filterPushdown.enabled=true)",
        )
    return value == "true"


def split_by_support(filters: Sequence[Any], support: Any) -> tuple[list[ColumnFilter], list[Any]]:
    """``(pushed, returned)``: the translated filters the connector uses, and Spark's filters it
    must still evaluate (everything not ``EXACT``). ``support`` maps a ``ColumnFilter`` to its
    ``FilterSupport``."""
    pushed: list[ColumnFilter] = []
    returned: list[Any] = []
    for f in filters:
        cf = to_column_filter(f)
        how = FilterSupport.NONE if cf is None else support(cf)
        if cf is not None and how is not FilterSupport.NONE:
            pushed.append(cf)
        if how is not FilterSupport.EXACT:
            returned.append(f)
    return pushed, returned


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def millisecond_bound(op: str, value: dt.datetime) -> int:
    """The bound a time comparison sets on record times kept in whole epoch milliseconds.

    For ``>`` / ``>=``: the first millisecond admitted; for ``<`` / ``<=``: the first excluded (a
    half-open ``[from, until)``). Spark's value has microseconds; a record's time is a whole ms.
    """
    us = (value - _EPOCH) // dt.timedelta(microseconds=1)
    floor_next, ceil = us // 1000 + 1, -(-us // 1000)
    return floor_next if op in (">", "<=") else ceil
