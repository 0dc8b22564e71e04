"""Watermark alignment in the local runtime, on two sequence partitions 100 s apart in event time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from connector_base import SourceReaderContext
from connector_base.event_time import MAX_WATERMARK, WatermarkStrategy
from connector_base.runtime import LocalRuntime
from connectors.sequence import SequenceOptions, SequenceSource
from connectors.sequence.record_emitter import Row, SequenceRecordEmitter
from connectors.sequence.source import SequenceSourceReader
from connectors.sequence.split_reader import FETCH_BATCH_CONFIG, SequenceSplitReader

ROWS = 100_000
STEP_MS = 10
SKEW_MS = 100_000
DRIFT_MS = 1_000
FETCH_ROWS = 64
IN_FLIGHT_FETCHES = 4
"""Fetches already made when a pause lands: queue capacity 2, one pending, one being made."""


def event_time(row: Row, record_timestamp: int) -> int:
    """Partition 1 runs ``SKEW_MS`` ahead of partition 0."""
    partition, index, _ = row
    return index * STEP_MS + (SKEW_MS if partition == 1 else 0)


class RecordingReader(SequenceSourceReader):
    """Notes, on the reader thread, where each split stands whenever alignment pauses or resumes."""

    calls: list[tuple[list[str], list[str], dict[str, int]]]

    def pause_or_resume_splits(self, splits_to_pause: Sequence[str], splits_to_resume: Sequence[str]) -> None:
        emitted = {sid: st.next_index - 1 for sid, st in self.split_states.items()}
        self.calls.append((list(splits_to_pause), list(splits_to_resume), emitted))
        super().pause_or_resume_splits(splits_to_pause, splits_to_resume)


class RecordingSource(SequenceSource):
    def __init__(self, rows: int = ROWS) -> None:
        super().__init__(SequenceOptions(partitions=2, rows_per_partition=rows))
        self.readers: list[RecordingReader] = []

    def create_reader(self, context: SourceReaderContext) -> RecordingReader:
        reader = RecordingReader(
            lambda: SequenceSplitReader(batch=FETCH_ROWS), SequenceRecordEmitter(), context
        )
        reader.calls = []
        self.readers.append(reader)
        return reader


STRATEGY = (
    WatermarkStrategy.for_monotonous_timestamps()
    .with_timestamp_assigner(event_time)
    .with_watermark_alignment("seq", DRIFT_MS, update_interval=20)
)


def _run(source: RecordingSource, parallelism: int) -> list[Row]:
    with LocalRuntime(
        source,
        parallelism=parallelism,
        reader_config={FETCH_BATCH_CONFIG: FETCH_ROWS},
        watermark_strategy=STRATEGY,
        auto_watermark_interval_ms=10,
    ) as runtime:
        runtime.start()
        rows: list[Row] = runtime.wait_finished(timeout=120)
        for subtask in range(parallelism):  # a finished reader's watermark is the end of time
            event_time = runtime.reader_event_time(subtask)
            assert event_time is not None and event_time.watermark == MAX_WATERMARK
    return rows


def _exactly_once(rows: list[Row], per_partition: int = ROWS) -> None:
    counts = Counter((p, i) for p, i, _ in rows)
    assert len(counts) == 2 * per_partition and set(counts.values()) == {1}


def test_the_split_ahead_is_paused_then_resumed_and_nothing_is_lost() -> None:
    source = RecordingSource()
    rows = _run(source, parallelism=1)
    _exactly_once(rows)
    (reader,) = source.readers
    calls = reader.calls
    assert calls and calls[0][:2] == (["p1"], []), calls[:3]  # the split ahead pauses first
    first_resume = next(at for _, resume, at in calls if "p1" in resume)
    paused_at = calls[0][2]
    slack_rows = IN_FLIGHT_FETCHES * FETCH_ROWS
    # paused, p1 read no more than what was in flight, while p0 caught up to within the drift
    assert first_resume["p1"] - paused_at["p1"] <= slack_rows, (paused_at, first_resume)
    for _, resume, at in calls:
        for sid in resume:
            other = "p0" if sid == "p1" else "p1"
            if other in at:  # a split resumes only within the drift of the other (plus what was in flight)
                mine, theirs = (int(sid[1]), at[sid], ""), (int(other[1]), at[other], "")
                ahead = event_time(mine, 0) - event_time(theirs, 0)
                assert ahead <= DRIFT_MS + slack_rows * STEP_MS, (sid, at)


COORDINATED_ROWS = ROWS
"""A reader with no watermark yet does not hold the others back (as Flink): with 20,000 rows a
split or reader ahead could finish before the other had a first watermark (loaded runs)."""


def test_readers_align_through_the_coordinator() -> None:
    source = RecordingSource(COORDINATED_ROWS)
    rows = _run(source, parallelism=2)
    _exactly_once(rows, COORDINATED_ROWS)
    calls = [c for r in source.readers for c in r.calls]
    assert "p1" in {sid for pause, _, _ in calls for sid in pause}
    assert "p1" in {sid for _, resume, _ in calls for sid in resume}
