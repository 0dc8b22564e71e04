"""Pravega's watermarks end to end: the sink notes time, the source's cut follows the watermarks.

* ``noteTime.column`` on the sink (batch, both delivery modes): after each write the controller
  writes a watermark whose time is the largest value of the column and whose stream cut is at the
  stream's tails, i.e. after every event written.
* ``eventTime.cutFrom=watermarks`` on the source: three rounds of events, each noted with its
  largest time (the project's writer, ``note_time``), then a fourth round not noted. A query with
  ``eventTime.alignment=cut`` and a limit of one round per batch reads one round per micro-batch,
  each ending exactly at a watermark's stream cut with that watermark's lower bound as the logged
  cut time, and leaves the round no watermark covers unread.

Real Pravega standalone only: the emulator accepts ``noteTimestampFromWriter`` and ignores it, and
writes no ``_MARK`` stream (a skip with that reason there). The fixture's standalone computes
watermarks every second (``controller.watermarking.frequency.seconds=1``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from pravega_helpers import read_options

from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.controller_client import ConnectionSettings, shared_controller
from connectors.pravega.event_writer import PravegaEventWriter
from connectors.pravega.watermarks import PravegaWatermark, WatermarkReader
from integration_tests.connectors.spark_batches import collect_batches, logged_offsets
from sparkflow_testing.pravega.cluster import PravegaCluster, unique_name

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROUND = 200
T0_MS = 1_700_000_000_000
WATERMARK_WAIT_S = 60.0


def _real_only(cluster: PravegaCluster) -> None:
    if cluster.is_emulator:
        pytest.skip("emulator: accepts noteTimestampFromWriter and ignores it; it writes no _MARK stream")


def _stream(cluster: PravegaCluster, segments: int) -> tuple[str, str]:
    controller = shared_controller(ConnectionSettings(cluster.controller_uri))
    scope, stream = unique_name("wmsc"), unique_name("wmst")
    controller.create_scope(scope)
    assert controller.create_stream(scope, stream, segments)
    return scope, stream


def _wait_watermarks(cluster: PravegaCluster, scope: str, stream: str, count: int) -> list[PravegaWatermark]:
    """The stream's watermarks once there are ``count`` (fails after ``WATERMARK_WAIT_S``)."""
    client = PravegaClusterClient(ConnectionSettings(cluster.controller_uri))
    try:
        reader = WatermarkReader(scope, stream, lambda: client)
        deadline = time.monotonic() + WATERMARK_WAIT_S
        while len(reader.watermarks) < count and time.monotonic() < deadline:
            reader.poll()
            time.sleep(0.3)
        assert len(reader.watermarks) >= count, (reader.watermarks, count)
        return reader.watermarks
    finally:
        client.close()


def _tails(cluster: PravegaCluster, scope: str, stream: str) -> dict[int, int]:
    settings = ConnectionSettings(cluster.controller_uri)
    client = PravegaClusterClient(settings)
    try:
        segments = shared_controller(settings).current_segments(scope, stream)
        return {s.segment_id: client.info(scope, stream, s.segment_id).tail for s in segments}
    finally:
        client.close()


def _round(r: int) -> tuple[list[bytes], list[str | None], int]:
    """Round ``r``: ``ROUND`` JSON events a second apart, a minute after round ``r - 1``; its largest time."""
    base = T0_MS + r * 60_000
    payloads = [json.dumps({"id": f"r{r}-{i:04d}", "ts": base + i}).encode() for i in range(ROUND)]
    return payloads, [f"k{i % 16}" for i in range(ROUND)], base + ROUND - 1


@pytest.mark.parametrize("exactly_once", ["false", "true"])
def test_the_sink_notes_the_largest_time_of_each_write(
    pravega_cluster: PravegaCluster, spark: Any, exactly_once: str
) -> None:
    _real_only(pravega_cluster)
    scope, stream = _stream(pravega_cluster, 2)
    options = {
        "controller": pravega_cluster.controller_uri,
        "scope": scope,
        "stream": stream,
        "exactly_once": exactly_once,
        "noteTime.column": "ts",
    }
    for write, count in ((0, 1), (1, 2)):
        rows = [(f"w{write}-{i}", f"k{i % 8}", T0_MS + write * 60_000 + i) for i in range(300)]
        df = spark.createDataFrame(rows, "event string, routing_key string, ts long").repartition(3)
        df.write.format("pravega").options(**options).mode("append").save()
        marks = _wait_watermarks(pravega_cluster, scope, stream, count)
        newest = marks[-1]
        assert newest.lower_ms == newest.upper_ms == T0_MS + write * 60_000 + 299, marks
        assert newest.cut == _tails(pravega_cluster, scope, stream), (
            newest.cut,
            "every event is before the cut",
        )


def test_a_timestamp_column_is_noted_in_epoch_ms(pravega_cluster: PravegaCluster, spark: Any) -> None:
    _real_only(pravega_cluster)
    from pyspark.sql import functions as F

    scope, stream = _stream(pravega_cluster, 1)
    df = spark.createDataFrame([(f"e{i}", T0_MS + i * 1000) for i in range(10)], "event string, ms long")
    df = df.select("event", F.timestamp_millis("ms").alias("at"))
    df.write.format("pravega").options(
        controller=pravega_cluster.controller_uri, scope=scope, stream=stream, **{"noteTime.column": "at"}
    ).mode("append").save()
    assert _wait_watermarks(pravega_cluster, scope, stream, 1)[-1].lower_ms == T0_MS + 9000


def test_the_cut_ends_each_batch_at_a_watermarks_stream_cut(
    pravega_cluster: PravegaCluster, spark: Any, tmp_path: Path
) -> None:
    _real_only(pravega_cluster)
    scope, stream = _stream(pravega_cluster, 2)
    writer = PravegaEventWriter(ConnectionSettings(pravega_cluster.controller_uri), scope, stream)
    try:
        for r in range(3):
            payloads, keys, newest = _round(r)
            writer.write_many(payloads, keys)
            writer.note_time(newest)
            _wait_watermarks(pravega_cluster, scope, stream, r + 1)  # one watermark per round
        payloads, keys, _newest = _round(3)
        writer.write_many(payloads, keys)  # no time noted: no watermark covers round 3
        writer.flush()
    finally:
        writer.abandon()
    marks = _wait_watermarks(pravega_cluster, scope, stream, 3)
    assert [m.lower_ms for m in marks] == [_round(r)[2] for r in range(3)], marks
    options = read_options(
        pravega_cluster,
        scope,
        stream,
        maxEventsPerTrigger=str(ROUND),
        **{"eventTime.alignment": "cut", "eventTime.cutFrom": "watermarks"},
    )
    df = spark.readStream.format("pravega").options(**options).load()
    rows = collect_batches(df, tmp_path / "cp", lambda b, row: (b, json.loads(bytes(row.event))["id"]))
    ids = [i for _b, i in rows]
    assert len(ids) == len(set(ids)) == 3 * ROUND, "each noted event once, none of round 3"
    by_batch: dict[int, set[str]] = {}
    for batch, event_id in rows:
        by_batch.setdefault(batch, set()).add(event_id.split("-")[0])
    assert sorted(by_batch.values(), key=sorted) == [{"r0"}, {"r1"}, {"r2"}], by_batch
    logged = [o for o in logged_offsets(tmp_path / "cp").values()]
    assert [o["cut"]["t"] for o in logged] == [m.lower_ms for m in marks], logged
    for offset, mark in zip(logged, marks, strict=True):
        ends = {int(s["pos"]) for s in offset["splits"].values()}
        assert ends == set(mark.cut.values()), (offset, mark)


def test_bad_watermark_options_fail_at_load(pravega_cluster: PravegaCluster, spark: Any) -> None:
    options = read_options(pravega_cluster, "sc", "st", **{"eventTime.alignment": "cut"})
    with pytest.raises(Exception, match="eventTime.cutFrom"):
        spark.readStream.format("pravega").options(**options, **{"eventTime.cutFrom": "marks"}).load()
    with pytest.raises(Exception, match=r"eventTime.column.*cutFrom=watermarks"):
        spark.readStream.format("pravega").options(
            **options, **{"eventTime.cutFrom": "watermarks", "eventTime.column": "ts"}
        ).load()
    lone = read_options(pravega_cluster, "sc", "st", **{"eventTime.cutFrom": "watermarks"})
    with pytest.raises(Exception, match=r"eventTime.cutFrom.*unless eventTime.alignment=cut"):
        spark.readStream.format("pravega").options(**lone).load()
    df = spark.createDataFrame([("e", 1)], "event string, n long")
    with pytest.raises(Exception, match=r"noteTime.column.*'when' is not a column"):
        df.write.format("pravega").options(
            controller=pravega_cluster.controller_uri, scope="sc", stream="st", **{"noteTime.column": "when"}
        ).mode("append").save()
