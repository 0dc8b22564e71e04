"""The ``pravega`` sink in both modes, batch and streaming, read back with ``format("pravega")``."""

from __future__ import annotations

import os
from typing import Any

import pytest
from pravega_helpers import keyed_events, new_stream, read_options, spark, write_events

from sparkflow_testing.pravega.cluster import PravegaCluster, unique_name

pytestmark = [pytest.mark.integration, pytest.mark.spark]
__all__ = ["spark"]


def _read(spark: Any, cluster: PravegaCluster, scope: str, stream: str) -> list[Any]:
    return spark.read.format("pravega").options(**read_options(cluster, scope, stream)).load().collect()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("exactly_once", ["false", "true"])
def test_batch_write_with_routing_keys(
    pravega_cluster: PravegaCluster, spark: Any, exactly_once: str
) -> None:
    scope, stream = new_stream(pravega_cluster, segments=3)
    rows = [(f"w:k{i % 5}:{i:08d}", f"k{i % 5}") for i in range(2000)]
    df = spark.createDataFrame(rows, "event string, routing_key string").repartition(3)
    df.write.format("pravega").options(
        controller=pravega_cluster.controller_uri, scope=scope, stream=stream, exactly_once=exactly_once
    ).mode("append").save()
    got = _read(spark, pravega_cluster, scope, stream)
    assert sorted(bytes(r["event"]).decode() for r in got) == sorted(e for e, _k in rows)
    # one routing key lives in one segment (no scaling here)
    segments: dict[str, set[int]] = {}
    for r in got:
        segments.setdefault(bytes(r["event"]).decode().split(":")[1], set()).add(r["segment_id"])
    assert all(len(s) == 1 for s in segments.values()), segments


@pytest.mark.timeout(300)
def test_failed_job_leaves_nothing_in_exactly_once_mode(pravega_cluster: PravegaCluster, spark: Any) -> None:
    scope, stream = new_stream(pravega_cluster, segments=2)
    from pyspark.sql import functions as F

    df = spark.range(0, 1000, numPartitions=4).select(
        F.when(F.col("id") == 900, F.raise_error(F.lit("boom")))
        .otherwise(F.col("id").cast("string"))
        .alias("event")
    )
    with pytest.raises(Exception, match="boom"):
        df.write.format("pravega").options(
            controller=pravega_cluster.controller_uri, scope=scope, stream=stream, exactly_once="true"
        ).mode("append").save()
    assert _read(spark, pravega_cluster, scope, stream) == []


@pytest.mark.timeout(300)
def test_stream_to_stream_exactly_once_and_create_stream(
    pravega_cluster: PravegaCluster, spark: Any, tmp_path: Any
) -> None:
    scope, source = new_stream(pravega_cluster, segments=2)
    events = keyed_events("x", 1500, keys=6)
    write_events(pravega_cluster, scope, source, events)
    target = unique_name("out")
    query = (
        spark.readStream.format("pravega")
        .options(**read_options(pravega_cluster, scope, source, maxEventsPerTrigger="400"))
        .load()
        .selectExpr("event", "concat('k', cast(segment_id as string)) as routing_key")
        .writeStream.format("pravega")
        .options(
            controller=pravega_cluster.controller_uri,
            scope=scope,
            stream=target,
            exactly_once="true",
            allow_create_stream="true",
            segments="2",
        )
        .option("checkpointLocation", os.path.join(str(tmp_path), "chk"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(240)
    assert query.exception() is None, query.exception()
    got = _read(spark, pravega_cluster, scope, target)
    assert sorted(bytes(r["event"]) for r in got) == sorted(p for _k, p in events)


@pytest.mark.timeout(120)
def test_sink_option_errors(pravega_cluster: PravegaCluster, spark: Any) -> None:
    df = spark.createDataFrame([("a",)], "event string")
    with pytest.raises(Exception, match="does not exist"):
        df.write.format("pravega").options(
            controller=pravega_cluster.controller_uri, scope="nope", stream="none"
        ).mode("append").save()
    with pytest.raises(Exception, match="'exactly_once'"):
        df.write.format("pravega").options(
            controller=pravega_cluster.controller_uri, scope="s", stream="t", exactly_once="perhaps"
        ).mode("append").save()
    with pytest.raises(Exception, match="'event' column"):
        spark.createDataFrame([("a",)], "value string").write.format("pravega").options(
            controller=pravega_cluster.controller_uri, scope="s", stream="t"
        ).mode("append").save()
