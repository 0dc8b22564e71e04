"""Scaling while a streaming query runs: nothing lost or duplicated, order per routing key kept."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
from pravega_helpers import (
    keyed_events,
    new_stream,
    read_options,
    spark,
    start_foreach_batch,
    wait_batches,
    write_events,
)

from sparkflow_testing.pravega.cluster import PravegaCluster

pytestmark = [pytest.mark.integration, pytest.mark.spark]
__all__ = ["spark"]


def _check_order(batches: list[tuple[int, list[Any]]]) -> None:
    """Per routing key, events sorted by (micro-batch, offset) are in write order.

    Within one micro-batch a key's events come from one segment only (a successor is planned
    only in a batch after the one that finished its predecessors), so the offset orders them.
    """
    by_key: dict[str, list[tuple[int, int, int, int]]] = {}
    for batch_id, rows in batches:
        for r in rows:
            _p, key, seq = bytes(r["event"]).decode().split(":")
            by_key.setdefault(key, []).append((batch_id, r["offset"], int(seq), r["segment_id"]))
    for key, items in by_key.items():
        items.sort()
        seqs = [s for _b, _o, s, _seg in items]
        assert seqs == sorted(seqs), f"key {key} out of order across scaling: {items[:30]}"
        for (b1, _o1, _s1, seg1), (b2, _o2, _s2, seg2) in zip(items, items[1:], strict=False):
            assert b1 != b2 or seg1 == seg2, f"key {key}: two segments in micro-batch {b1}"


@pytest.mark.timeout(360)
def test_split_and_merge_while_streaming(pravega_cluster: PravegaCluster, spark: Any, tmp_path: Any) -> None:
    cluster = pravega_cluster
    scope, stream = new_stream(cluster, segments=2)
    admin = cluster.admin
    written = keyed_events("s", 600, keys=12)
    write_events(cluster, scope, stream, written)
    opts = read_options(cluster, scope, stream, maxEventsPerTrigger="150", discovery_interval_ms="100")
    batches, query = start_foreach_batch(spark, opts, os.path.join(str(tmp_path), "chk"))
    try:
        wait_batches(batches, 150, query)
        # split both segments while the query is behind
        for seg in admin.active_segments(scope, stream):
            admin.split(scope, stream, seg["id"])
        more = keyed_events("s", 600, keys=12, start=600)
        write_events(cluster, scope, stream, more)
        written += more
        # merge the first two current segments back into one
        current = sorted(admin.active_segments(scope, stream), key=lambda s: s["min_key"])
        a, b = current[0], current[1]
        admin.scale(scope, stream, [a["id"], b["id"]], [(a["min_key"], b["max_key"])])
        last = keyed_events("s", 600, keys=12, start=1200)
        write_events(cluster, scope, stream, last)
        written += last
        wait_batches(batches, len(written), query, timeout=180)
        time.sleep(1.5)  # a duplicate would show up now
    finally:
        query.stop()
    payloads = [bytes(r["event"]) for _b, rows in batches for r in rows]
    assert sorted(payloads) == sorted(p for _k, p in written)
    segments = {r["segment_id"] for _b, rows in batches for r in rows}
    assert len(segments) >= 5, segments  # 2 original + 4 after the split + the merged one
    _check_order(batches)
