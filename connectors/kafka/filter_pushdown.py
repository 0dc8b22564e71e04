"""Kafka's answer to pushed filters: which records a batch read can skip, per partition.

* ``topic`` / ``partition`` ``=`` and ``IN``: other partitions are not planned (exact);
* ``offset`` comparisons: each range is clipped (exact);
* ``timestamp >= / >``: each partition starts at the first offset whose timestamp is at or after the
  bound (offsets for times). Kafka answers with the earliest such offset, so no earlier record
  matches, whatever the topic's timestamp type;
* ``timestamp < / <=``: each partition ends at the first offset at or after the bound, on topics
  whose ``message.timestamp.type`` is ``LogAppendTime`` only: under ``CreateTime`` timestamps need
  not grow with offsets, and a later record may still match.

Timestamp filters narrow the ranges but stay with Spark, which evaluates them on every row read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from connector_base.spark.filters import ColumnFilter, FilterSupport, millisecond_bound
from connectors.kafka.positions import OffsetLookup, TopicPartition

__all__ = ["KafkaFilters", "kafka_filter_support"]

_COMPARISONS = ("=", ">", ">=", "<", "<=")


def kafka_filter_support(f: ColumnFilter) -> FilterSupport:
    """How far the Kafka planner answers ``f``."""
    if f.column == "topic" and f.op in ("=", "in") and all(isinstance(v, str) for v in f.values):
        return FilterSupport.EXACT
    ints = all(isinstance(v, int) and not isinstance(v, bool) for v in f.values)
    if f.column == "partition" and f.op in ("=", "in") and ints:
        return FilterSupport.EXACT
    if f.column == "offset" and f.op in _COMPARISONS and ints:
        return FilterSupport.EXACT
    if f.column == "timestamp" and f.op in _COMPARISONS[1:] and isinstance(f.value, dt.datetime):
        return FilterSupport.NARROWS
    return FilterSupport.NONE


@dataclass
class KafkaFilters:
    """The pushed filters, combined: allowed topics and partitions, an offset range, and a
    timestamp range in whole milliseconds ``[from_ms, until_ms)``."""

    topics: set[str] | None = None
    partitions: set[int] | None = None
    min_offset: int = 0
    max_offset: int | None = None
    """Exclusive."""
    from_ms: int | None = None
    until_ms: int | None = None
    """Exclusive."""
    applied: list[ColumnFilter] = field(default_factory=list)

    @staticmethod
    def of(filters: Sequence[ColumnFilter]) -> KafkaFilters:
        """Combine ``filters`` (each must be supported by ``kafka_filter_support``)."""
        k = KafkaFilters(applied=list(filters))
        for f in filters:
            if f.column == "topic":
                values = {str(v) for v in f.values}
                k.topics = values if k.topics is None else k.topics & values
            elif f.column == "partition":
                ints = {int(v) for v in f.values}
                k.partitions = ints if k.partitions is None else k.partitions & ints
            elif f.column == "offset":
                v = int(f.value)
                lo = {"=": v, ">": v + 1, ">=": v}.get(f.op)
                hi = {"=": v + 1, "<": v, "<=": v + 1}.get(f.op)
                if lo is not None:
                    k.min_offset = max(k.min_offset, lo)
                if hi is not None:
                    k.max_offset = hi if k.max_offset is None else min(k.max_offset, hi)
            elif f.column == "timestamp":
                bound = millisecond_bound(f.op, f.value)
                if f.op in (">", ">="):
                    k.from_ms = bound if k.from_ms is None else max(k.from_ms, bound)
                else:
                    k.until_ms = bound if k.until_ms is None else min(k.until_ms, bound)
        return k

    def keeps(self, tp: TopicPartition) -> bool:
        """Whether partition ``tp`` may hold matching records."""
        return (self.topics is None or tp[0] in self.topics) and (
            self.partitions is None or tp[1] in self.partitions
        )

    def bounds(
        self,
        ranges: Mapping[TopicPartition, tuple[int, int]],
        lookup: OffsetLookup,
        log_append_time: set[str],
    ) -> dict[TopicPartition, tuple[int, int]]:
        """Narrowed ``[start, end)`` for each kept partition's planned range (at most two batched
        offsets-for-times lookups); ``start >= end`` means nothing to read."""
        out = {
            tp: (max(a, self.min_offset), b if self.max_offset is None else min(b, self.max_offset))
            for tp, (a, b) in ranges.items()
            if self.keeps(tp)
        }
        live = [tp for tp, (a, b) in out.items() if a < b]
        if self.from_ms is not None and live:
            found = lookup.for_times({tp: self.from_ms for tp in live})
            for tp in live:
                a, b = out[tp]
                first = found.get(tp)
                out[tp] = (b, b) if first is None else (max(a, first), b)
        ordered = [tp for tp in live if tp[0] in log_append_time and out[tp][0] < out[tp][1]]
        if self.until_ms is not None and ordered:
            found = lookup.for_times({tp: self.until_ms for tp in ordered})
            for tp in ordered:
                a, b = out[tp]
                after = found.get(tp)
                if after is not None:
                    out[tp] = (a, min(b, after))
        return out
