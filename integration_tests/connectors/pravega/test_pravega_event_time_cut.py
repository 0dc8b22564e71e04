"""``eventTime.alignment=cut`` for ``format("pravega")``: event time from a JSON field of the events.

Two streams of one segment each; the events of "behind" are an hour older than those of "ahead"
(``{"id": ..., "ts": <epoch ms>, "pad": ...}``, one a second). Under a per-trigger limit and a 10-minute
watermark, the cut reads "behind" first and Spark drops no row as late; without it the limit is
spread over both segments and Spark drops part of "behind". The driver's scan, driven batch by batch
as the bridge drives it, reads each byte of the streams once, and a driver restarted from any
batch's start offset plans that batch the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pravega_helpers import deduped_by_event_time, new_stream, read_options, write_events

from connector_base.spark.event_time_cut import EventTimeCut
from connector_base.spark.event_time_options import Alignment, EventTimeOptions
from connector_base.spark.offsets import OFFSET_VERSION
from connector_base.spark.read_limits import admit
from connectors.pravega.event_time import EventTimeEncoding, EventTimeExtractor
from connectors.pravega.options import PravegaSourceOptions
from connectors.pravega.planner import PravegaSegmentPlanner
from connectors.pravega.split import PravegaSegmentSplit
from integration_tests.connectors.spark_batches import collect_batches, logged_offsets
from sparkflow_testing.pravega.cluster import PravegaCluster, unique_name

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

EVENTS = 400
LIMIT = 200
"""Two batches per stream with the cut, four mixed ones without (measured: with a limit of one
stream's events the two batches without the cut dropped no row, four drop 200)."""
T0_MS = 1_700_000_000_000
HOUR_MS = 3_600_000
PAD = "x" * 300
"""About 350-byte events: a segment (210 kB) is more than the driver's first read (64 KiB), so the
scan windows end inside the segments and events straddle the reads."""


EVENT_BYTES = len(json.dumps({"id": "behind-0000", "ts": T0_MS, "pad": PAD})) + 8
"""An event of "behind" with its header (those of "ahead" are a byte shorter)."""


def _events(tag: str, base_ms: int) -> list[tuple[str | None, bytes]]:
    return [
        (None, json.dumps({"id": f"{tag}-{i:04d}", "ts": base_ms + i * 1000, "pad": PAD}).encode())
        for i in range(EVENTS)
    ]


@pytest.fixture(scope="module")
def skewed(pravega_cluster: PravegaCluster) -> tuple[str, str, str]:
    """``(scope, stream behind, stream ahead)``, one segment each, "behind" an hour older."""
    scope = unique_name("sc")
    _scope, behind = new_stream(pravega_cluster, segments=1, scope=scope)
    _scope, ahead = new_stream(pravega_cluster, segments=1, scope=scope)
    write_events(pravega_cluster, scope, behind, _events("behind", T0_MS))
    write_events(pravega_cluster, scope, ahead, _events("ahead", T0_MS + HOUR_MS))
    return scope, behind, ahead


def _watermarked(spark: Any, options: dict[str, str], checkpoint: Path) -> tuple[int, int, list[str]]:
    """``(rows read, rows dropped as late, ids out)`` of a 10-minute watermark + dedup, AvailableNow."""
    return deduped_by_event_time(spark, options, checkpoint, "10 minutes")


def test_a_watermark_drops_no_row_with_the_cut_and_some_without(
    pravega_cluster: PravegaCluster, spark: Any, skewed: tuple[str, str, str], tmp_path: Path
) -> None:
    scope, behind, ahead = skewed
    options = read_options(pravega_cluster, scope, f"{behind},{ahead}", maxEventsPerTrigger=str(LIMIT))
    cut = {"eventTime.alignment": "cut", "eventTime.column": "ts"}
    read, dropped, ids = _watermarked(spark, {**options, **cut}, tmp_path / "cut")
    assert (read, dropped) == (2 * EVENTS, 0), f"with the cut: {read} rows read, {dropped} dropped as late"
    assert len(ids) == len(set(ids)) == 2 * EVENTS, "with the cut: events lost or duplicated"
    logged = list(logged_offsets(tmp_path / "cut").values())  # version 2: T and each segment's time
    cuts = [o["cut"]["t"] for o in logged]
    assert len(set(cuts)) == 2 * EVENTS // LIMIT and cuts == sorted(cuts), cuts  # + no-data batches
    assert all(o["v"] == OFFSET_VERSION and len(o["cut"]["et"]) == 2 for o in logged), logged[0]
    read, dropped, ids = _watermarked(spark, options, tmp_path / "off")
    assert read == 2 * EVENTS and dropped > 0, f"without the cut: {read} rows read, {dropped} dropped as late"
    assert len(ids) == 2 * EVENTS - dropped


BACKLOG_LIMIT = 200
"""``backlog.maxRecordsPerTrigger`` of the backlog run; its normal ``maxEventsPerTrigger`` is 50."""


def test_a_catching_up_batch_with_the_cut_takes_the_backlog_limit(
    pravega_cluster: PravegaCluster, spark: Any, skewed: tuple[str, str, str], tmp_path: Path
) -> None:
    """``backlog.maxRecordsPerTrigger`` raises the limit while catching up, and the cut's scan follows
    it: four batches of 200, "behind" first (before, the scan and the counts stopped at 50 + 1 events
    a segment, so the query never entered backlog and ran 16 batches of 50)."""
    from pyspark.sql import functions as F

    scope, behind, ahead = skewed
    options = read_options(
        pravega_cluster,
        scope,
        f"{behind},{ahead}",
        maxEventsPerTrigger="50",
        **{"backlog.maxRecordsPerTrigger": str(BACKLOG_LIMIT)},
        **{"eventTime.alignment": "cut", "eventTime.column": "ts"},
    )
    df = spark.readStream.format("pravega").options(**options).load()
    df = df.select(F.get_json_object(F.col("event").cast("string"), "$.id").alias("id"))
    kept = collect_batches(df, tmp_path / "cp", lambda batch, row: (batch, row["id"]))
    batches: dict[int, list[str]] = {}
    for batch, event_id in kept:
        batches.setdefault(batch, []).append(event_id)
    sizes = [len(ids) for _b, ids in sorted(batches.items())]
    tags = [{i.split("-")[0] for i in ids} for _b, ids in sorted(batches.items())]
    assert sizes == [BACKLOG_LIMIT] * 4, sizes
    assert tags == [{"behind"}, {"behind"}, {"ahead"}, {"ahead"}], tags
    assert len({i for _b, i in kept}) == 2 * EVENTS


def _entries(positions: dict[str, int]) -> dict[str, Any]:
    """The offset's split entries as the bridge writes them (the split itself left out)."""
    return {sid: {"first": 0, "pos": pos} for sid, pos in positions.items()}


@pytest.mark.parametrize(
    "limit",
    # 200 events of "behind" are 72,200 bytes: windows by bytes end inside an event of "ahead"
    [{"maxEventsPerTrigger": str(LIMIT)}, {"maxBytesPerTrigger": str(LIMIT * EVENT_BYTES)}],
    ids=["events", "bytes"],
)
def test_the_driver_reads_each_byte_once_and_batches_follow_event_time_and_replay(
    pravega_cluster: PravegaCluster, skewed: tuple[str, str, str], limit: dict[str, str]
) -> None:
    """The bridge's steps (cut, then admission by the limit) batch after batch, without Spark; a
    driver restarted at any batch plans that batch the same."""
    scope, behind, ahead = skewed
    raw = read_options(pravega_cluster, scope, f"{behind},{ahead}", **limit)
    options = PravegaSourceOptions.parse(raw, streaming=True)
    planner = _planner(options)
    cut = EventTimeCut(EventTimeOptions(alignment=Alignment.CUT))
    splits = {s.split_id: s for s in (PravegaSegmentSplit(scope, st, 0, 0) for st in (behind, ahead))}
    positions: dict[str, int] = dict.fromkeys(splits, 0)
    start: dict[str, Any] = {"v": OFFSET_VERSION, "splits": _entries(positions)}
    cuts: list[int] = []
    lengths: dict[str, int] = {}
    try:
        for _batch in range(4 * EVENTS // LIMIT):
            chosen, lengths = _plan(planner, cut, options, splits, positions, start)
            if chosen == positions:
                break
            # a driver restarted from this batch's start offset plans the same batch
            restarted = _planner(options)
            try:
                fresh = EventTimeCut(EventTimeOptions(alignment=Alignment.CUT))
                assert _plan(restarted, fresh, options, splits, positions, start)[0] == chosen
            finally:
                restarted.close()
            mark = cut.mark(chosen)
            assert mark is not None
            cuts.append(mark.cut_ms)
            read = {sid: chosen[sid] - positions[sid] for sid in splits}
            # the batch behind reads alone until it is done: never both at once
            assert sum(1 for n in read.values() if n) == 1, f"batch read {read}"
            positions = chosen
            start = {"v": OFFSET_VERSION, "splits": _entries(positions), "cut": mark.to_json()}
        assert positions == lengths, "not every event was admitted"
        assert cuts == sorted(cuts) and len(cuts) == 2 * EVENTS // LIMIT, cuts
        assert cuts[EVENTS // LIMIT - 1] <= T0_MS + EVENTS * 1000, "the segment ahead was read too early"
        assert planner.event_times is not None
        assert planner.event_times.bytes_read == sum(lengths.values()), "the driver read some bytes twice"
    finally:
        planner.close()


def test_a_restarted_driver_holds_the_cut_at_a_segment_read_to_its_end(
    pravega_cluster: PravegaCluster, skewed: tuple[str, str, str]
) -> None:
    """Streaming, no split idle yet: once "behind" is read to its end, its head (an hour before
    "ahead") holds the cut until it idles. A driver restarted from any batch's start offset has read
    none of "behind", so it takes that head from the offset's event time and plans the same batch
    (before, it had no head there and let "ahead" be read at once)."""
    scope, behind, ahead = skewed
    raw = read_options(pravega_cluster, scope, f"{behind},{ahead}", maxEventsPerTrigger=str(LIMIT))
    options = PravegaSourceOptions.parse(raw, streaming=True)
    planner = _planner(options)
    cut = EventTimeCut(EventTimeOptions(alignment=Alignment.CUT))  # idleTimeout 60 s: none idles here
    splits = {s.split_id: s for s in (PravegaSegmentSplit(scope, st, 0, 0) for st in (behind, ahead))}
    positions: dict[str, int] = dict.fromkeys(splits, 0)
    start: dict[str, Any] = {"v": OFFSET_VERSION, "splits": _entries(positions)}
    marks: list[dict[str, Any]] = []
    try:
        for _batch in range(EVENTS // LIMIT + 1):  # "behind" in two batches, then a held one
            chosen, lengths = _plan(planner, cut, options, splits, positions, start, final=False)
            mark = cut.mark(chosen)
            assert mark is not None
            restarted = _planner(options)
            try:
                fresh = EventTimeCut(EventTimeOptions(alignment=Alignment.CUT))
                again = _plan(restarted, fresh, options, splits, positions, start, final=False)[0]
                again_mark = fresh.mark(again)
            finally:
                restarted.close()
            assert (again, again_mark) == (chosen, mark), f"batch {len(marks)}: {again} after a restart"
            marks.append(mark.to_json())
            positions = chosen
            start = {"v": OFFSET_VERSION, "splits": _entries(positions), "cut": mark.to_json()}
        behind_id, ahead_id = (PravegaSegmentSplit(scope, st, 0, 0).split_id for st in (behind, ahead))
        assert positions == {behind_id: lengths[behind_id], ahead_id: 0}, "the segment ahead was read"
        head = T0_MS + (EVENTS - 1) * 1000
        assert marks[-1] == {"t": head + 1, "et": {behind_id: head + 1, ahead_id: head + 1}}, marks
    finally:
        planner.close()


def _planner(options: PravegaSourceOptions) -> PravegaSegmentPlanner:
    return PravegaSegmentPlanner(options, EventTimeExtractor(EventTimeEncoding.JSON, "ts"))


def _plan(
    planner: PravegaSegmentPlanner,
    cut: EventTimeCut,
    options: PravegaSourceOptions,
    splits: dict[str, PravegaSegmentSplit],
    positions: dict[str, int],
    start: dict[str, Any],
    final: bool = True,
) -> tuple[dict[str, int], dict[str, int]]:
    """``(chosen ends, available ends)`` of one batch, as the bridge's ``latestOffset`` plans it
    (``final``: as under ``Trigger.AvailableNow``, a split read to its end is idle at once)."""
    ends = planner.end_positions({sid: (s, positions[sid]) for sid, s in splits.items()})
    ranges = {sid: (s, positions[sid], ends[sid]) for sid, s in splits.items()}
    bounded = cut.bound(planner, start, ranges, options.read_limits(), final=final)
    chosen = admit(planner, bounded, options.read_limits())
    return {sid: int(p) for sid, p in chosen.items()}, {sid: int(e) for sid, e in ends.items()}


@pytest.mark.parametrize(
    "extra, named",
    [
        ({"eventTime.alignment": "cut"}, "option 'eventTime.alignment'.*eventTime.column"),
        ({"eventTime.alignment": "cut", "eventTime.encoding": "avro"}, "option 'eventTime.encoding'"),
        (
            {"eventTime.alignment": "cut", "eventTime.encoding": "int64", "eventTime.column": "ts"},
            "option 'eventTime.column'",
        ),
    ],
)
def test_bad_event_time_options_fail_at_load(
    pravega_cluster: PravegaCluster,
    spark: Any,
    skewed: tuple[str, str, str],
    extra: dict[str, str],
    named: str,
) -> None:
    scope, behind, _ahead = skewed
    options = read_options(pravega_cluster, scope, behind, **extra)
    with pytest.raises(Exception, match=named):
        spark.readStream.format("pravega").options(**options).load()
