"""files-unified's answer to pushed filters: which files and Parquet row groups a batch read skips.

* a filter on a partition column (``name=value`` directories, see partitions.py) drops every file
  whose directory value cannot satisfy it;
* a filter on a Parquet column drops every row group whose statistics (min, max, null count) show
  that no row satisfies it.

``= > >= < <= IN IS NULL IS NOT NULL`` are used; every filter also stays with Spark, which evaluates
it on the rows of the files and row groups that are read. Values are compared only within one kind
(numbers, strings, bytes, booleans, dates, timezone-aware timestamps); any other pairing, a column
without statistics or a nested column keeps the row group. Floating-point ``>`` / ``>=`` keep it
too: Parquet statistics leave NaN out, and Spark orders NaN above every number.
"""

from __future__ import annotations

import datetime as dt
import decimal
import logging
from collections.abc import Sequence
from typing import Any

import pyarrow.parquet as pq

from connector_base.spark.filters import ColumnFilter, FilterSupport
from connectors.files.formats import ReadSchema
from connectors.files.partitions import partition_value, partition_values

__all__ = ["FileFilters", "files_filter_support"]

LOG = logging.getLogger(__name__)

_OPS = ("=", ">", ">=", "<", "<=", "in", "is_null", "is_not_null")


def files_filter_support(f: ColumnFilter) -> FilterSupport:
    """How far the files planner answers ``f`` (it narrows; Spark keeps every filter)."""
    return FilterSupport.NARROWS if f.op in _OPS and "." not in f.column else FilterSupport.NONE


def _kind(v: Any) -> str | None:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int | float | decimal.Decimal):
        return "number"
    if isinstance(v, str):
        return "str"
    if isinstance(v, bytes | bytearray):
        return "bytes"
    if isinstance(v, dt.datetime):
        return "timestamp" if v.tzinfo is not None else None
    if isinstance(v, dt.date):
        return "date"
    return None


def may_match(f: ColumnFilter, lo: Any, hi: Any, nulls: int | None, rows: int) -> bool:
    """Whether some of ``rows`` values with minimum ``lo``, maximum ``hi`` (``None``: unknown) and
    ``nulls`` nulls (``None``: unknown) may satisfy ``f``."""
    if f.op == "is_null":
        return nulls is None or nulls > 0
    if f.op == "is_not_null":
        return nulls is None or nulls < rows
    if nulls is not None and nulls >= rows:
        return False  # only nulls: no comparison holds
    if lo is None or hi is None:
        return True
    kind = _kind(lo)
    if kind is None or _kind(hi) != kind or any(_kind(v) != kind for v in f.values):
        return True
    if any(isinstance(x, float) for x in (lo, hi, *f.values)) and (
        f.op in (">", ">=") or any(v != v for v in f.values)
    ):
        return True
    try:
        match f.op:
            case "=" | "in":
                return any(lo <= v <= hi for v in f.values)
            case ">":
                return bool(hi > f.value)
            case ">=":
                return bool(hi >= f.value)
            case "<":
                return bool(lo < f.value)
            case "<=":
                return bool(lo <= f.value)
    except TypeError:
        return True
    return True


class FileFilters:
    """The pushed filters, split into partition-column and data-column ones."""

    def __init__(self, filters: Sequence[ColumnFilter], schema: ReadSchema) -> None:
        self.applied = list(filters)
        self.schema = schema
        self.on_partitions = [f for f in filters if f.column in schema.partitions]
        self.on_data = [f for f in filters if f.column in schema.data.names]

    def keeps_file(self, path: str) -> bool:
        """Whether the file's partition values may satisfy every partition filter."""
        if not self.on_partitions:
            return True
        raw = dict(partition_values(self.schema.root, path))
        for f in self.on_partitions:
            value = partition_value(raw.get(f.column), self.schema.output.field(f.column).type)
            if not may_match(f, value, value, int(value is None), 1):
                return False
        return True

    def row_groups(self, path: str) -> list[bool]:
        """Per row group of the Parquet file at ``path``: whether it may hold a matching row."""
        meta = pq.ParquetFile(path).metadata
        if not self.on_data:
            return [True] * meta.num_row_groups
        index = {meta.schema.column(j).path: j for j in range(meta.num_columns)}
        out = []
        for i in range(meta.num_row_groups):
            rg = meta.row_group(i)
            keep = True
            for f in self.on_data:
                j = index.get(f.column)
                if j is None:
                    continue  # not in this file (read as nulls) or nested: keep
                stats = rg.column(j).statistics
                if stats is None:
                    continue
                lo, hi = (stats.min, stats.max) if stats.has_min_max else (None, None)
                nulls = stats.null_count if stats.has_null_count else None
                if not may_match(f, lo, hi, nulls, rg.num_rows):
                    keep = False
                    break
            out.append(keep)
        return out
