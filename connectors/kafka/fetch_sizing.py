"""How many bytes a bounded read task's consumer fetches per partition, from its ranges' records.

librdkafka parses a whole fetch response into messages before a reader sees the first of them, and
a task's reader drops what lies past its range's stopping offset. So a range that ends before its
partition's log does (a piece of a range cut by ``minPartitions`` or ``maxRecordsPerPartition``, a
micro-batch's share of a backlog under ``maxOffsetsPerTrigger``) paid for parsing the whole fetch
that covers its stop, and the one librdkafka prefetched after it: at the former fixed 8 MiB, about
36,000 random 200-byte records beyond each 10,000-record piece, and the rest of the partition when
its records were lz4-compressed. Spark's Java consumer decodes its fetches lazily, a batch at a
time, so it never paid that.

So a bounded task's consumer fetches about what its largest range holds: ``fetch_bytes`` turns the
records of a task's ranges into bytes with the records per fetched byte this process has seen for
their topic (``observe``), rounded up to a power of two between ``MIN_FETCH_BYTES`` and
``MAX_FETCH_BYTES`` (few sizes, so few pooled consumers per size; the consumer pool keys on it).
Until a topic has been seen, a task fetches ``MAX_FETCH_BYTES`` (the throughput of whole ranges is
unchanged: a range larger than that fetches as before).

librdkafka also fetches ahead while a partition's queue holds fewer than ``queued.min.messages``
(100,000 by default): the fetch after the one that covered a range's stop was parsed too. A sized
task's consumer keeps ``queued.min.messages`` at the largest power of two within its largest range
(``queued_min_messages``), so a fetch that brings the whole range stops the prefetching; a longer
range still keeps about a range's records ahead.

The records per byte are learned from what a fetch actually brought, on the wire (compressed where
the producer compressed), which no metadata request tells: the compiled consumer's first fetch of a
task that reads a single range is counted exactly (``KafkaNativePartitionSplitReader``: it takes
one record as soon as the fetch lands and asks librdkafka how many it has queued), when it brought
more than the range holds (the waste to avoid; a read at the log's end, a micro-batch's usual one,
teaches nothing and keeps the consumer it had). A fetch cut short by the log's end counts fewer
records than a full one would hold, so the estimate errs to larger fetches, never to more fetches
per range; the next, smaller fetches count better. confluent-kafka's consumer cannot tell how many it
has queued, so the Python reader fetches ``MAX_FETCH_BYTES`` for topics the compiled one has not
seen in the process.

Threading: the estimates are one dict per process, read and replaced whole under the GIL.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "MAX_FETCH_BYTES",
    "MIN_FETCH_BYTES",
    "fetch_bytes",
    "fetch_settings",
    "forget",
    "observe",
    "queued_min_messages",
    "records_per_byte",
]

MIN_FETCH_BYTES = 65_536
MAX_FETCH_BYTES = 8_388_608
"""The largest fetch per partition, and the size for topics not seen yet (librdkafka's
``max.partition.fetch.bytes``; the Java client's default is 1 MiB, which cost whole ranges 10% here)."""

MIN_QUEUED_MESSAGES = 1_024
MAX_QUEUED_MESSAGES = 131_072
"""Bounds of a sized consumer's ``queued.min.messages`` (librdkafka's default is 100,000)."""

_LEARNING_WEIGHT = 0.5
"""Weight of a new observation against the estimate so far (a topic's producers may change)."""

_RECORDS_PER_BYTE: dict[str, float] = {}


def fetch_bytes(ranges: Iterable[tuple[str, int]]) -> int:
    """The fetch size for a task whose ranges are ``(topic, records)``: a power of two that holds the
    largest of them by what its topic's fetches carried, within ``MIN_FETCH_BYTES`` and
    ``MAX_FETCH_BYTES``; ``MAX_FETCH_BYTES`` when a topic has not been seen."""
    needed = 0.0
    for topic, records in ranges:
        density = _RECORDS_PER_BYTE.get(topic)
        if density is None:
            return MAX_FETCH_BYTES
        needed = max(needed, records / density)
    size = MIN_FETCH_BYTES
    while size < needed and size < MAX_FETCH_BYTES:
        size *= 2
    return size


def queued_min_messages(ranges: Iterable[tuple[str, int]]) -> int:
    """``queued.min.messages`` for a task whose ranges are ``(topic, records)``: the largest power of
    two within its largest range, between ``MIN_QUEUED_MESSAGES`` and ``MAX_QUEUED_MESSAGES``."""
    largest = max((records for _, records in ranges), default=0)
    count = MIN_QUEUED_MESSAGES
    while count * 2 <= largest and count < MAX_QUEUED_MESSAGES:
        count *= 2
    return count


def fetch_settings(ranges: Iterable[tuple[str, int]]) -> dict[str, int]:
    """The librdkafka settings for a bounded task whose ranges are ``(topic, records)``: none until
    each of their topics has been seen (the consumer's defaults then), else its fetch size and
    prefetch depth."""
    ranges = list(ranges)
    size = fetch_bytes(ranges) if ranges else MAX_FETCH_BYTES
    if size >= MAX_FETCH_BYTES:
        return {}  # as a consumer for topics not seen yet: one pooled consumer for both
    return {"max.partition.fetch.bytes": size, "queued.min.messages": queued_min_messages(ranges)}


def observe(topic: str, fetched_bytes: int, records: int) -> None:
    """One fetch of at most ``fetched_bytes`` per partition brought ``records`` records of ``topic``."""
    if fetched_bytes <= 0 or records <= 0:
        return
    density = records / fetched_bytes
    known = _RECORDS_PER_BYTE.get(topic)
    _RECORDS_PER_BYTE[topic] = density if known is None else known + _LEARNING_WEIGHT * (density - known)


def records_per_byte(topic: str) -> float | None:
    """The estimate for ``topic`` (None until a fetch of it has been counted in this process)."""
    return _RECORDS_PER_BYTE.get(topic)


def forget() -> None:
    """Drop every estimate (tests)."""
    _RECORDS_PER_BYTE.clear()
