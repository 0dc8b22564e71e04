"""Pravega's watermarks end to end: the sink notes time, the source's cut follows the watermarks.

* ``noteTime.column`` on the sink (batch, both delivery modes): after each write the controller
  writes a watermark whose time is the largest value of the column and whose stream cut is at the
  stream's tails, i.e. after every event written.
* ``eventTime.cutFrom=watermarks`` on the source: three rounds of events, each noted with its
  largest time (the project's writer, ``note_time``), then a fourth round not noted. A query with
  ``eventTime.alignment=cut`` and a limit of one round per batch reads one round per micro-batch,
  each ending exactly at a watermark's stream cut with that watermark's lower bound as the logged
  cut time, and leaves the round no watermark covers unread.
* Spark's own watermark drops nothing with that cut: two writers write interleaved times to both
  segments of a stream, round after round, each noting the round's largest time; a
  ``withWatermark("t", "0 seconds")`` + ``dropDuplicatesWithinWatermark`` query (append mode) reads
  every event exactly once, none dropped as late, and a second query shows one whole round per
  micro-batch. The same events read without the cut under a limit of 3/4 round spread over the
  segments lose rows as late, which shows the data exposes batches that run ahead in one segment
  (Spark judges batch N's rows against the watermark batch N-1 ran with, so a batch must run two
  batches ahead in one segment to lose rows; one round per batch is what catches a smaller slip).

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
from pravega_helpers import deduped_by_event_time, read_options

from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.controller_client import ConnectionSettings, shared_controller
from connectors.pravega.event_router import hash_routing_key
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


MIXED_ROUNDS = 4
CHUNK = 25
"""Events per write of one writer before the other writer's turn."""
LOW_KEYS = [k for k in (f"k{n}" for n in range(64)) if hash_routing_key(k) < 0.5][:4]
HIGH_KEYS = [k for k in (f"k{n}" for n in range(64)) if hash_routing_key(k) >= 0.5][:4]
"""Routing keys of the lower and the upper segment of a two-segment stream: three events of four go
to the lower one, so a limit spread evenly over the segments lets the upper one run ahead."""


def _mixed_round(r: int) -> list[tuple[int, str, int]]:
    """Round ``r`` as ``(writer, id, time)``: ``ROUND`` events a second apart, even seconds by writer 0
    and odd seconds by writer 1, five minutes after round ``r - 1`` began (after its last event)."""
    base = T0_MS + r * 300_000
    return [(i % 2, f"m{r}-{i:04d}", base + i * 1000) for i in range(ROUND)]


def _key(n: int) -> str:
    return HIGH_KEYS[n % 4] if n % 4 == 3 else LOW_KEYS[n % 4]


def _write_mixed_rounds(cluster: PravegaCluster, scope: str, stream: str) -> None:
    """``MIXED_ROUNDS`` noted rounds by two writers taking turns every ``CHUNK`` events, then one round
    not noted (see the module docstring).

    Both writers note a time before they write (a writer that has noted nothing takes no part in a
    watermark, so its older events could lie after a cut), and both note the round's largest time:
    a watermark's window is then one instant, and everything before its cut is at or before its
    lower bound. (Writers noting different times give a window ``[lower, upper]``; events up to
    ``upper`` may lie before the cut, so Spark's delay must cover ``upper - lower``.)"""
    settings = ConnectionSettings(cluster.controller_uri)
    writers = [PravegaEventWriter(settings, scope, stream, f"wm-mixed-{w}") for w in (0, 1)]
    try:
        for writer in writers:  # both take part in the watermarks before either writes
            writer.note_time(T0_MS - 1)
        _wait_watermarks(cluster, scope, stream, 1)
        for r in range(MIXED_ROUNDS + 1):
            mine = [[e for e in _mixed_round(r) if e[0] == w] for w in (0, 1)]
            for start in range(0, ROUND // 2, CHUNK):
                for w, writer in enumerate(writers):
                    chunk = mine[w][start : start + CHUNK]
                    writer.write_many(
                        [json.dumps({"id": i, "ts": t}).encode() for _w, i, t in chunk],
                        [_key(start + n) for n in range(len(chunk))],
                    )
                    writer.flush()  # so the segments hold the chunks in turn
            if r < MIXED_ROUNDS:
                newest = max(t for _w, _i, t in _mixed_round(r))
                for writer in writers:
                    writer.note_time(newest)
                _wait_watermarks(cluster, scope, stream, r + 2)
    finally:
        for writer in writers:
            writer.abandon()


def _deduped(spark: Any, options: dict[str, str], checkpoint: Path) -> tuple[int, int, list[str]]:
    """``(rows read, rows dropped as late, ids out)`` of a zero-delay watermark + dedup, AvailableNow."""
    return deduped_by_event_time(spark, options, checkpoint, "0 seconds")


def test_spark_drops_no_row_as_late_with_the_watermark_cut(
    pravega_cluster: PravegaCluster, spark: Any, tmp_path: Path
) -> None:
    _real_only(pravega_cluster)
    scope, stream = _stream(pravega_cluster, 2)
    _write_mixed_rounds(pravega_cluster, scope, stream)
    noted = {i for r in range(MIXED_ROUNDS) for _w, i, _t in _mixed_round(r)}
    options = read_options(pravega_cluster, scope, stream, maxEventsPerTrigger=str(ROUND))
    cut = {"eventTime.alignment": "cut", "eventTime.cutFrom": "watermarks"}
    read, dropped, ids = _deduped(spark, {**options, **cut}, tmp_path / "cut")
    assert (read, dropped) == (len(noted), 0), f"with the cut: {read} rows read, {dropped} dropped as late"
    assert sorted(ids) == sorted(noted), "with the cut: every noted event exactly once"
    # and batch by batch: each micro-batch holds one whole round, the rounds in order
    rounds = collect_batches(
        spark.readStream.format("pravega").options(**options, **cut).load(),
        tmp_path / "batches",
        lambda b, row: (b, json.loads(bytes(row.event))["id"].split("-")[0]),
    )
    by_batch: dict[int, set[str]] = {}
    for batch, tag in rounds:
        by_batch.setdefault(batch, set()).add(tag)
    assert [by_batch[b] for b in sorted(by_batch)] == [{f"m{r}"} for r in range(MIXED_ROUNDS)], by_batch
    assert len(rounds) == len(noted)
    # the same events without the cut under a limit of 3/4 round spread evenly over the segments: the
    # upper segment runs ahead in time and Spark drops rows of the lower one as late
    off = {**options, "maxEventsPerTrigger": str(ROUND * 3 // 4)}
    read, dropped, ids = _deduped(spark, off, tmp_path / "off")
    assert read == len(noted) + ROUND and dropped > 0, f"without the cut: {read} read, {dropped} dropped"
    assert len(ids) == len(set(ids)) == read - dropped


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
