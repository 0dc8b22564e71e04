"""A merge whose predecessors end in different micro-batches: the successor waits for the last one.

Two segments A and B are merged into C while a query is behind on A only: B is read to its tail,
A holds a large backlog, and ``maxEventsPerTrigger`` spreads A over many micro-batches. C (events
written after the merge, for the routing keys of both) must not be read before A is read to its
end, or a key's newer events (in C) would come before its older ones (in A). With even
predecessors both end in the same batch, which is why ``test_pravega_scaling`` cannot see this.
Deterministic: the first query reads everything written before the skew, the second (same
checkpoint, after the merge) starts with B finished and A far behind. (A and B are the two halves
of a split segment: a fixed scaling policy refuses a merge below its initial segment count.)
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest
from pravega_helpers import collect_available_now, new_stream, read_options, spark, write_events

from sparkflow_testing.pravega.cluster import PravegaCluster

pytestmark = [pytest.mark.integration, pytest.mark.spark]
__all__ = ["spark"]

KEYS = 40
HEAVY = 1000
AFTER_MERGE = 200
PER_TRIGGER = 100


def _event(key: str, seq: int) -> tuple[str, bytes]:
    return key, f"{key}:{seq:08d}".encode()


@pytest.mark.timeout(600)
def test_successor_of_an_uneven_merge_waits_for_the_predecessor_still_read(
    pravega_cluster: PravegaCluster, spark: Any, tmp_path: Path
) -> None:
    cluster = pravega_cluster
    # one segment split in two (a fixed policy's minimum stays 1, so the two can merge back into one)
    scope, stream = new_stream(cluster, segments=1)
    (initial,) = [s["id"] for s in cluster.admin.active_segments(scope, stream)]
    cluster.admin.split(scope, stream, initial)
    options = read_options(cluster, scope, stream, maxEventsPerTrigger=str(PER_TRIGGER))
    keys = [f"k{i}" for i in range(KEYS)]
    written = [_event(k, 0) for k in keys]
    write_events(cluster, scope, stream, written)
    checkpoint = str(tmp_path / "chk")

    # first query: everything so far (one event per key), and where each key is routed
    first, query = collect_available_now(spark, options, checkpoint)
    assert query.exception() is None, query.exception()
    rows = [r for _b, batch in first for r in batch]
    assert len(rows) == KEYS
    segment_of = {bytes(r["event"]).decode().split(":")[0]: r["segment_id"] for r in rows}
    a, b = [s["id"] for s in cluster.admin.active_segments(scope, stream)]  # in key order
    heavy_keys = [k for k in keys if segment_of[k] == a]
    assert heavy_keys and len(heavy_keys) < KEYS, f"all {KEYS} keys routed to one segment: {segment_of}"

    # A gets a large backlog, B none; then A and B merge into C, which gets events of every key
    heavy = [_event(heavy_keys[i % len(heavy_keys)], 1 + i // len(heavy_keys)) for i in range(HEAVY)]
    write_events(cluster, scope, stream, heavy)
    current = cluster.admin.active_segments(scope, stream)
    merged = cluster.admin.scale(scope, stream, [a, b], [(current[0]["min_key"], current[-1]["max_key"])])
    (c,) = [s["id"] for s in merged["created"]]
    later = [_event(k, 10_000 + i) for i in range(AFTER_MERGE // KEYS) for k in keys]
    write_events(cluster, scope, stream, later)

    batches, query = collect_available_now(spark, options, checkpoint, timeout=420)
    assert query.exception() is None, query.exception()
    got = [(batch_id, r) for batch_id, batch in batches for r in batch]
    counts = collections.Counter(bytes(r["event"]) for _b, r in got)
    assert set(counts) == {p for _k, p in heavy + later} and max(counts.values()) == 1

    by_segment: dict[int, list[int]] = collections.defaultdict(list)
    for batch_id, r in got:
        by_segment[r["segment_id"]].append(batch_id)
    assert set(by_segment) == {a, c}, sorted(by_segment)
    assert len(set(by_segment[a])) > 2, "A's backlog was not spread over several micro-batches"
    assert min(by_segment[c]) > max(by_segment[a]), (
        f"successor {c} was read from micro-batch {min(by_segment[c])}, before its predecessor {a} "
        f"ended in micro-batch {max(by_segment[a])}"
    )
    # and so, per routing key, events come in write order
    per_key: dict[str, list[tuple[int, int, int, int]]] = collections.defaultdict(list)
    for batch_id, r in got:
        key, seq = bytes(r["event"]).decode().split(":")
        per_key[key].append((batch_id, r["segment_id"] >> 32, r["offset"], int(seq)))
    for key, items in per_key.items():
        seqs = [item[-1] for item in sorted(items)]
        assert seqs == sorted(seqs), f"routing key {key} out of order: {sorted(items)[:10]}"
