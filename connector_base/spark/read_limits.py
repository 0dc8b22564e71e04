"""Admission control: how much of the available backlog one micro-batch takes (see :func:`admit`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from connector_base.spark.planner import Backlog, Position, SplitPlanner
from connector_base.spark.read_limit_options import ReadLimitOptions

__all__ = ["admit"]


def admit(
    planner: SplitPlanner[Any],
    ranges: Mapping[str, tuple[Any, Position, Position]],
    limits: ReadLimitOptions | None,
) -> dict[str, Position]:
    """Choose each split's end for one micro-batch: ``split_id -> (split, start, available end)``.

    Record and byte maxima are spread over splits in proportion to their backlog. Records use Spark's
    Kafka source's arithmetic for ``maxOffsetsPerTrigger`` exactly (``_spark_share``: no split with a
    backlog gets nothing); bytes are cut to sum to the maximum, and the same never-starve rule holds:
    a split whose byte share admits none of it gets its smallest unit (``SplitPlanner.smallest_cut``:
    one record, line or row group), so a batch may exceed the byte maximum by one unit per split.
    ``max_files`` admits whole splits in the planner's order (``SplitPlanner.admission_key``).
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
        pending = sorted(pending, key=lambda sid: planner.admission_key(ranges[sid][0]))[: limits.max_files]
    quotas_records = _proportional(pending, backlogs, limits.max_records, "records")
    quotas_bytes = _proportional(pending, backlogs, limits.max_bytes, "bytes")
    progressed = False
    for sid in pending:
        split, start, end = ranges[sid]
        max_r = quotas_records.get(sid) if limits.max_records is not None else None
        max_b = quotas_bytes.get(sid) if limits.max_bytes is not None else None
        cut = end if max_r is None and max_b is None else planner.cut(split, start, end, max_r, max_b)
        if cut == start and max_b is not None and (max_r is None or max_r > 0):
            cut = planner.smallest_cut(split, start, end)  # a byte share below one unit: never starve
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
    if field == "records" and total >= 1:
        return {sid: _spark_share(maximum, s, total) if s is not None else 0 for sid, s in sizes.items()}
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


def _spark_share(maximum: int, size: int, total: int) -> int:
    """One split's share of a record maximum, with the arithmetic of Spark's Kafka source.

    ``KafkaMicroBatchStream.rateLimit``: ``maximum * (size / total)`` in doubles, rounded down, except
    that a share below one record is rounded up so a small split is never starved while large ones
    drain. A batch may so hold a few records more (or, by float rounding, fewer) than the maximum.
    """
    share = maximum * (size / total)
    return math.ceil(share) if share < 1 else math.floor(share)
