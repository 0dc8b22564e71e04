"""``format("pravega")`` reads on the emulator: bounded and continuous, stream cuts, several streams."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pravega_helpers import keyed_events, new_stream, read_options, run_stream, spark, wait_rows, write_events

from sparkflow_testing.pravega.cluster import PravegaCluster

pytestmark = [pytest.mark.integration, pytest.mark.spark]
__all__ = ["spark"]


def _payloads(rows: list[Any]) -> list[bytes]:
    return [bytes(r["event"]) for r in rows]


@pytest.mark.timeout(240)
def test_batch_read_returns_every_event_once_with_metadata(
    pravega_cluster: PravegaCluster, spark: Any
) -> None:
    scope, stream = new_stream(pravega_cluster, segments=3)
    events = keyed_events("b", 3000, keys=16)
    write_events(pravega_cluster, scope, stream, events)
    rows = (
        spark.read.format("pravega").options(**read_options(pravega_cluster, scope, stream)).load().collect()
    )
    assert sorted(_payloads(rows)) == sorted(p for _k, p in events)
    assert {r["scope"] for r in rows} == {scope} and {r["stream"] for r in rows} == {stream}
    assert len({r["segment_id"] for r in rows}) > 1
    # offsets are event boundaries in each segment: increasing, and each key's events are in order
    by_segment: dict[int, list[Any]] = {}
    for r in rows:
        by_segment.setdefault(r["segment_id"], []).append(r)
    for seg_rows in by_segment.values():
        seg_rows.sort(key=lambda r: r["offset"])
        assert seg_rows[0]["offset"] == 0
        for a, b in zip(seg_rows, seg_rows[1:], strict=False):
            assert b["offset"] == a["offset"] + 8 + len(a["event"])
        from pravega_helpers import assert_key_order

        assert_key_order([bytes(r["event"]) for r in seg_rows])


@pytest.mark.timeout(240)
def test_start_and_end_stream_cuts(pravega_cluster: PravegaCluster, spark: Any) -> None:
    scope, stream = new_stream(pravega_cluster, segments=2)
    first = keyed_events("one", 400, keys=4)
    write_events(pravega_cluster, scope, stream, first)
    # the text form of the cut after `first`, from the rows' offsets
    rows = (
        spark.read.format("pravega").options(**read_options(pravega_cluster, scope, stream)).load().collect()
    )
    ends: dict[int, int] = {}
    for r in rows:
        ends[r["segment_id"]] = max(ends.get(r["segment_id"], 0), r["offset"] + 8 + len(r["event"]))
    segments = (
        {s["id"] for s in pravega_cluster.control.active_segments(scope, stream)}
        if pravega_cluster.is_emulator
        else set(ends)
    )
    cut = f"{scope}/{stream}:" + ",".join(f"{s}={ends.get(s, 0)}" for s in sorted(segments))
    second = keyed_events("two", 300, keys=4, start=400)
    write_events(pravega_cluster, scope, stream, second)

    def read(**extra: str) -> list[bytes]:
        opts = read_options(pravega_cluster, scope, stream, **extra)
        return sorted(_payloads(spark.read.format("pravega").options(**opts).load().collect()))

    assert read(start_stream_cut=cut) == sorted(p for _k, p in second)
    assert read(end_stream_cut=cut) == sorted(p for _k, p in first)
    assert read(start_stream_cut="earliest", end_stream_cut="latest") == sorted(p for _k, p in first + second)
    assert read(start_stream_cut="latest") == []
    assert read(start_stream_cut=cut, end_stream_cut=cut) == []


@pytest.mark.timeout(240)
def test_several_streams_in_one_read(pravega_cluster: PravegaCluster, spark: Any) -> None:
    scope, s1 = new_stream(pravega_cluster, segments=2)
    _scope, s2 = new_stream(pravega_cluster, segments=1, scope=scope)
    other_scope, s3 = new_stream(pravega_cluster, segments=1)
    write_events(pravega_cluster, scope, s1, keyed_events("s1", 200))
    write_events(pravega_cluster, scope, s2, keyed_events("s2", 100))
    write_events(pravega_cluster, other_scope, s3, keyed_events("s3", 50))
    opts = {
        "controller": pravega_cluster.controller_uri,
        "scope": scope,
        "stream": f"{s1},{s2},{other_scope}/{s3}",
    }
    rows = spark.read.format("pravega").options(**opts).load().collect()
    counts: dict[tuple[str, str], int] = {}
    for r in rows:
        counts[(r["scope"], r["stream"])] = counts.get((r["scope"], r["stream"]), 0) + 1
    assert counts == {(scope, s1): 200, (scope, s2): 100, (other_scope, s3): 50}


@pytest.mark.timeout(300)
def test_continuous_read_sees_new_events_with_limits(
    pravega_cluster: PravegaCluster, spark: Any, tmp_path: Any
) -> None:
    scope, stream = new_stream(pravega_cluster, segments=2)
    first = keyed_events("c", 500, keys=4)
    write_events(pravega_cluster, scope, stream, first)
    opts = read_options(pravega_cluster, scope, stream, maxEventsPerTrigger="120")
    query = run_stream(spark, opts, str(tmp_path), "pv_cont", processingTime="200 milliseconds")
    try:
        wait_rows(spark, "pv_cont", 500, query)
        second = keyed_events("c", 300, keys=4, start=500)
        write_events(pravega_cluster, scope, stream, second)
        rows = wait_rows(spark, "pv_cont", 800, query)
        import time

        time.sleep(1.0)
        rows = spark.sql("select * from pv_cont").collect()
        progress = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    finally:
        query.stop()
    assert sorted(_payloads(rows)) == sorted(p for _k, p in first + second)
    assert progress and max(progress) <= 120, progress


@pytest.mark.timeout(120)
def test_invalid_options_fail_at_load(pravega_cluster: PravegaCluster, spark: Any) -> None:
    base = {"controller": pravega_cluster.controller_uri, "scope": "s", "stream": "t"}
    cases = [
        ({**base, "controller": "localhost"}, "'controller'"),
        ({k: v for k, v in base.items() if k != "stream"}, "'stream'"),
        ({"controller": pravega_cluster.controller_uri, "stream": "t"}, "'scope'"),
        ({**base, "start_stream_cut": "yesterday"}, "'start_stream_cut'"),
        ({**base, "end_stream_cut": "other/stream:0=5"}, "'end_stream_cut'"),
        ({**base, "maxEventsPerTrigger": "0"}, "'maxEventsPerTrigger'"),
        ({**base, "failOnDataLoss": "maybe"}, "'failondataloss'"),
        ({**base, "mode": "reader_group"}, "'mode'"),
        ({**base, "colour": "red"}, "'colour'"),
    ]
    for options, fragment in cases:
        # match=: any other failure (Spark's worker start limit on a loaded machine) surfaces whole
        with pytest.raises(Exception, match=f"(?i){re.escape(fragment)}"):
            spark.read.format("pravega").options(**options).load().schema  # noqa: B018
    # valid for readStream, so load() accepts it; a batch read refuses it before reading anything
    unbounded = spark.read.format("pravega").options(**base, end_stream_cut="unbounded").load()
    with pytest.raises(Exception, match="(?s)'end_stream_cut'.*unbounded"):
        unbounded.count()


@pytest.mark.timeout(120)
def test_secrets_never_appear_in_errors(pravega_cluster: PravegaCluster, spark: Any) -> None:
    options = {
        "controller": pravega_cluster.controller_uri,
        "scope": "s",
        "stream": "t",
        "auth_enabled": "true",
        "username": "admin",
        "password": "s3cr3t-pw",
        "start_stream_cut": "bad",
    }
    with pytest.raises(Exception, match="'start_stream_cut'") as info:
        spark.read.format("pravega").options(**options).load().schema  # noqa: B018
    assert "s3cr3t-pw" not in str(info.value)
    from connectors.pravega.options import PravegaSourceOptions

    del options["start_stream_cut"]
    assert "s3cr3t-pw" not in repr(PravegaSourceOptions.parse(options, streaming=False))
