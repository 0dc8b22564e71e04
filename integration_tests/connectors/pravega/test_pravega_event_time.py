"""Event time of Pravega reads in the local runtime: alignment of segments and readers, idleness.

Pravega events have no time of their own; here a user assigner gives each event ``offset`` ms,
plus ``SKEW_MS`` on the odd segment, so that segment runs ahead. With a 1 s drift the split that
holds it (a segment split, or the reader-group reader that owns it) is paused, resumed when the
other finishes, and every event comes out exactly once. Reads of 512 bytes make each segment take
many fetches. A continuous read of a quiet stream goes idle once every segment is read to its tail.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from pravega_helpers import keyed_events, new_stream, read_options, write_events

from connector_base import SourceReaderContext
from connector_base.event_time import MAX_WATERMARK, WatermarkStrategy
from connector_base.runtime import LocalRuntime
from connectors.pravega.options import PravegaSourceOptions
from connectors.pravega.reader_group_source import PravegaReaderGroupSource
from connectors.pravega.source import PravegaSource
from connectors.pravega.split_reader import FETCH_BYTES_CONFIG
from sparkflow_testing.pravega.cluster import PravegaCluster, unique_name

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

EVENTS = 4_000
SKEW_MS = 1_000_000
DRIFT_MS = 1_000
FETCH_BYTES = 512
IDLE_TIMEOUT_MS = 300


def event_time(row: Any, _record_timestamp: int) -> int:
    """``offset`` ms into the segment; the odd segment is ``SKEW_MS`` ahead."""
    _event, _scope, _stream, segment_id, offset = row
    return int(offset) + (SKEW_MS if segment_id % 2 else 0)


def _strategy() -> WatermarkStrategy[Any]:
    return (
        WatermarkStrategy.for_monotonous_timestamps()
        .with_timestamp_assigner(event_time)
        .with_watermark_alignment("pravega", DRIFT_MS, update_interval=20)
    )


class _Recording:
    """Wraps a source's ``create_reader``: every reader's pause/resume calls go to ``calls``, in order."""

    def __init__(self, source: Any) -> None:
        self.calls: list[tuple[list[str], list[str]]] = []
        create = source.create_reader

        def create_reader(context: SourceReaderContext) -> Any:
            reader = create(context)
            original = reader.pause_or_resume_splits

            def recording(splits_to_pause: Sequence[str], splits_to_resume: Sequence[str]) -> None:
                self.calls.append((list(splits_to_pause), list(splits_to_resume)))
                original(splits_to_pause, splits_to_resume)

            reader.pause_or_resume_splits = recording
            return reader

        source.create_reader = create_reader


def _run(source: Any, parallelism: int) -> tuple[list[Any], list[tuple[list[str], list[str]]]]:
    recording = _Recording(source)
    with LocalRuntime(
        source,
        parallelism=parallelism,
        reader_config={FETCH_BYTES_CONFIG: FETCH_BYTES},
        watermark_strategy=_strategy(),
        auto_watermark_interval_ms=10,
    ) as runtime:
        runtime.start()
        rows = runtime.wait_finished(timeout=120)
        for subtask in range(parallelism):
            reader_time = runtime.reader_event_time(subtask)
            assert reader_time is not None and reader_time.watermark == MAX_WATERMARK
    return rows, recording.calls


def _written(cluster: PravegaCluster) -> tuple[str, str, list[bytes]]:
    scope, stream = new_stream(cluster, segments=2)
    events = keyed_events("et", EVENTS, keys=32)
    write_events(cluster, scope, stream, events)
    return scope, stream, [payload for _key, payload in events]


def _check(rows: list[Any], expected: list[bytes], calls: list[tuple[list[str], list[str]]]) -> None:
    counts = Counter(bytes(r[0]) for r in rows)
    assert set(counts) == set(expected) and set(counts.values()) == {1}
    assert {r[3] for r in rows} == {0, 1}, "the events did not spread over both segments"
    assert calls, "alignment never paused the split ahead"
    (paused,) = calls[0][0]
    assert paused.endswith("/1") and not calls[0][1], calls[0]  # segment 1 / the reader that owns it
    assert any(paused in resume for _, resume in calls), calls


def test_segment_splits_the_one_ahead_waits_and_every_event_comes_once(
    pravega_cluster: PravegaCluster,
) -> None:
    scope, stream, expected = _written(pravega_cluster)
    options = PravegaSourceOptions.parse(read_options(pravega_cluster, scope, stream), streaming=False)
    rows, calls = _run(PravegaSource(options), parallelism=1)
    _check(rows, expected, calls)


def test_reader_group_the_reader_ahead_waits_and_every_event_comes_once(
    pravega_cluster: PravegaCluster,
) -> None:
    scope, stream, expected = _written(pravega_cluster)
    raw = read_options(pravega_cluster, scope, stream, mode="reader_group", reader_group=unique_name("rg"))
    options = PravegaSourceOptions.parse(raw, streaming=False)
    rows, calls = _run(PravegaReaderGroupSource(options), parallelism=2)
    _check(rows, expected, calls)


def test_a_quiet_stream_read_to_its_tails_goes_idle_and_a_new_event_wakes_it(
    pravega_cluster: PravegaCluster,
) -> None:
    scope, stream = new_stream(pravega_cluster, segments=2)
    write_events(pravega_cluster, scope, stream, keyed_events("a", 20, keys=8))
    options = PravegaSourceOptions.parse(read_options(pravega_cluster, scope, stream), streaming=True)
    strategy = (
        WatermarkStrategy.for_monotonous_timestamps()
        .with_timestamp_assigner(lambda row, _ts: int(row[4]))
        .with_idleness(IDLE_TIMEOUT_MS)
    )
    with LocalRuntime(
        PravegaSource(options), watermark_strategy=strategy, auto_watermark_interval_ms=20
    ) as rt:
        rt.start()
        rt.wait_for_records(20, timeout=60)
        reader_time = rt.reader_event_time(0)
        assert reader_time is not None
        seen = len(reader_time.history_snapshot())  # a reader with no split yet is idle too
        deadline = time.monotonic() + 20
        while "idle" not in reader_time.history_snapshot()[seen:] and time.monotonic() < deadline:
            time.sleep(0.05)
        history = reader_time.history_snapshot()[seen:]
        assert "idle" in history, f"segments read to their tails never went idle: {history}"
        write_events(pravega_cluster, scope, stream, keyed_events("b", 4, keys=4))
        while time.monotonic() < deadline:
            history = reader_time.history_snapshot()[seen:]
            if "active" in history[history.index("idle") + 1 :]:
                break
            time.sleep(0.05)
        assert "active" in history[history.index("idle") + 1 :], history
