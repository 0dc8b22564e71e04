"""``ParquetEventTimes``: the driver's event-time lookups for ``files-unified`` (``eventTime.alignment=cut``).

Event time is the column ``eventTime.column`` (a timestamp, or an integer of epoch milliseconds),
read from each Parquet row group's statistics (the footer only, no data), once per file. A file
split's positions are row-group indexes, so the cut works in whole row groups:

* a position by time ``t`` is the first row group in ``[start, end)`` whose **max** is ``>= t``:
  every row before it is older than ``t``; rows older than ``t`` in that row group (or in later ones,
  when the file is not sorted) are held for a later batch, never skipped. So a cut only ever delays
  rows, by at most the time span of the row group that straddles it (sorted files) or of the
  file (unsorted ones): keep the ``withWatermark`` delay above that, or write smaller row groups;
* a file's head is the largest max of its row groups before the end;
* the time at a position is that row group's max (the time from which it is read).

Other formats have no statistics: the driver would have to read every file, so they refuse the cut.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from connector_base.errors import ConnectorError
from connector_base.spark import Position
from connectors.files.split import FileSourceSplit

__all__ = ["ParquetEventTimes"]

COLUMN_OPTION = "eventTime.column"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
_PER_MS = {"s": 0.001, "ms": 1, "us": 1_000, "ns": 1_000_000}


class ParquetEventTimes:
    """``(min ms, max ms)`` of the event-time column per row group of each file, from the footers.

    Threading: the driver's stream-reader thread only.
    """

    def __init__(self, column: str) -> None:
        self.column = column
        self._stats: dict[str, list[tuple[int, int]]] = {}

    def row_groups(self, split: FileSourceSplit) -> list[tuple[int, int]]:
        """The column's ``(min, max)`` in epoch ms of every row group of the split's file."""
        known = self._stats.get(split.path)
        if known is None:
            known = self._stats[split.path] = _read_stats(split.path, self.column)
        return known

    def positions_at_time(
        self, ranges: Mapping[str, tuple[FileSourceSplit, Position, Position]], t_ms: int
    ) -> dict[str, Position]:
        """The first row group in ``[start, end)`` whose max is ``>= t_ms`` (``end`` when none)."""
        out: dict[str, Position] = {}
        for sid, (split, start, end) in ranges.items():
            groups = self.row_groups(split)
            out[sid] = next((g for g in range(int(start), int(end)) if groups[g][1] >= t_ms), end)
        return out

    def times_at(self, positions: Mapping[str, tuple[FileSourceSplit, Position]]) -> dict[str, int | None]:
        """The max of the row group at each position (``None`` at the file's end).

        Not its min: a row group is read once the cut passes its max, so that is the time it
        stands for (and a cut just after the smallest of these always admits a row group).
        """
        out: dict[str, int | None] = {}
        for sid, (split, pos) in positions.items():
            groups = self.row_groups(split)
            out[sid] = groups[int(pos)][1] if int(pos) < len(groups) else None
        return out

    def head_times(self, ends: Mapping[str, tuple[FileSourceSplit, Position]]) -> dict[str, int | None]:
        """The largest max of the row groups before each end (``None`` for an empty file)."""
        out: dict[str, int | None] = {}
        for sid, (split, end) in ends.items():
            maxes = [hi for _lo, hi in self.row_groups(split)[: int(end)]]
            out[sid] = max(maxes) if maxes else None
        return out


def _read_stats(path: str, column: str) -> list[tuple[int, int]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    names = pf.schema_arrow.names
    if column not in names:
        raise ConnectorError(
            f"{COLUMN_OPTION}={column!r}: file {path} has no such column (it has {', '.join(names)})"
        )
    arrow_type = pf.schema_arrow.field(column).type
    if not (pa.types.is_timestamp(arrow_type) or pa.types.is_integer(arrow_type)):
        raise ConnectorError(
            f"{COLUMN_OPTION}={column!r}: in {path} it is {arrow_type}; the cut needs a timestamp column "
            "or an integer one of epoch milliseconds"
        )
    meta = pf.metadata
    unit = getattr(arrow_type, "unit", None)
    out: list[tuple[int, int]] = []
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        index = next(j for j in range(group.num_columns) if group.column(j).path_in_schema == column)
        stats = group.column(index).statistics
        if group.num_rows == 0:
            last = out[-1][1] if out else 0
            out.append((last, last))  # nothing to read: never where a cut stops
            continue
        if stats is None or not stats.has_min_max:
            raise ConnectorError(
                f"{COLUMN_OPTION}={column!r}: row group {g} of {path} has no min/max statistics for it; "
                "write the files with statistics (pyarrow and Spark do by default) or use "
                "eventTime.alignment=off"
            )
        out.append((_ms(stats.min, unit), _ms(stats.max, unit)))
    return out


def _ms(value: Any, unit: str | None) -> int:
    """Epoch ms (rounded down) of a statistic: a datetime (naive = UTC), or an integer in ``unit``."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return (aware - _EPOCH) // _MS
    if unit is None:
        return int(value)
    return int(value // _PER_MS[unit]) if unit != "s" else int(value) * 1000
