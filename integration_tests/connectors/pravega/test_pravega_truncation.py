"""Truncated data: failOnDataLoss=true fails naming the segment and offsets; false skips to the head."""

from __future__ import annotations

import os
from typing import Any

import pytest
from pravega_helpers import collect_available_now, keyed_events, new_stream, read_options, spark, write_events

from sparkflow_testing.pravega.cluster import PravegaCluster

pytestmark = [pytest.mark.integration, pytest.mark.spark]
__all__ = ["spark"]


def _size(events: list[tuple[str, bytes]]) -> int:
    sizes = {len(p) for _k, p in events}
    assert len(sizes) == 1
    return 8 + sizes.pop()


@pytest.mark.timeout(360)
def test_truncation_while_behind_fails_or_skips(
    pravega_cluster: PravegaCluster, spark: Any, tmp_path: Any
) -> None:
    cluster = pravega_cluster
    scope, stream = new_stream(cluster, segments=1)
    (segment,) = [s["id"] for s in cluster.admin.active_segments(scope, stream)]
    first = keyed_events("t", 200, keys=3)
    write_events(cluster, scope, stream, first)
    checkpoint = os.path.join(str(tmp_path), "chk")
    opts = read_options(cluster, scope, stream)
    batches, query = collect_available_now(spark, opts, checkpoint)
    assert query.exception() is None, query.exception()
    assert sum(len(rows) for _b, rows in batches) == 200

    second = keyed_events("t", 200, keys=3, start=200)
    write_events(cluster, scope, stream, second)
    size = _size(first + second)
    cluster.admin.truncate(scope, stream, {segment: 300 * size})

    _batches, failed = collect_available_now(spark, {**opts, "failOnDataLoss": "true"}, checkpoint)
    error = str(failed.exception())
    assert "data loss" in error and f"{scope}/{stream}/0.#epoch.0" in error, error[:2000]
    assert f"from {200 * size} to {300 * size}" in error, error[:2000]

    batches, query = collect_available_now(spark, {**opts, "failOnDataLoss": "false"}, checkpoint)
    assert query.exception() is None, query.exception()
    got = sorted(bytes(r["event"]) for _b, rows in batches for r in rows)
    assert got == sorted(p for _k, p in second[100:])


@pytest.mark.timeout(240)
def test_batch_start_cut_below_the_head(pravega_cluster: PravegaCluster, spark: Any) -> None:
    cluster = pravega_cluster
    scope, stream = new_stream(cluster, segments=1)
    (segment,) = [s["id"] for s in cluster.admin.active_segments(scope, stream)]
    events = keyed_events("h", 100, keys=2)
    write_events(cluster, scope, stream, events)
    size = _size(events)
    cluster.admin.truncate(scope, stream, {segment: 40 * size})
    load = spark.read.format("pravega")
    earliest = load.options(**read_options(cluster, scope, stream)).load().collect()
    assert sorted(bytes(r["event"]) for r in earliest) == sorted(p for _k, p in events[40:])
    cut = f"{scope}/{stream}:{segment}=0"
    with pytest.raises(Exception, match="data loss in segment"):
        load.options(**read_options(cluster, scope, stream, start_stream_cut=cut)).load().collect()
    skipped = (
        load.options(**read_options(cluster, scope, stream, start_stream_cut=cut, failOnDataLoss="false"))
        .load()
        .collect()
    )
    assert sorted(bytes(r["event"]) for r in skipped) == sorted(p for _k, p in events[40:])
