"""Watermark alignment of file splits in the local runtime (tmp dir, event time from a column).

Two CSV files hold rows whose ``ts`` column is 100 s apart; two readers each take one file. With
a 1 s drift, the reader of the file ahead pauses its split until the other is within the drift,
and every row still comes out exactly once. Small fetches (``files.reader.fetch.bytes``) make the
two files advance in small steps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pyspark.sql.types import LongType, StringType, StructField, StructType

from connector_base import SourceReaderContext, SplitsAddition
from connector_base.event_time import MAX_WATERMARK, ColumnTimestampAssigner, WatermarkStrategy
from connector_base.runtime import LocalRuntime
from connectors.files import FileSource
from connectors.files.record_emitter import FileRecordEmitter
from connectors.files.source import FileSourceReader
from connectors.files.split_reader import CHUNK_BYTES_CONFIG, FileSplitReader
from unit_tests.connectors.files.helpers_files import make_source, whole_files

ROWS = 20_000
STEP_MS = 2
SKEW_MS = 100_000
DRIFT_MS = 1_000
FETCH_BYTES = 1_024
IN_FLIGHT_FETCHES = 4
"""Fetches already made when a pause lands: queue capacity 2, one pending, one being made."""
SCHEMA = StructType([StructField("name", StringType()), StructField("ts", LongType())])


class RecordingFileReader(FileSourceReader):
    """Notes every pause/resume alignment asks of this reader, with its split's byte position then."""

    calls: list[tuple[list[str], list[str], dict[str, int]]]

    def pause_or_resume_splits(self, splits_to_pause: Sequence[str], splits_to_resume: Sequence[str]) -> None:
        at = {sid: st.position for sid, st in self.split_states.items()}
        self.calls.append((list(splits_to_pause), list(splits_to_resume), at))
        super().pause_or_resume_splits(splits_to_pause, splits_to_resume)


class RecordingFileSource(FileSource):
    readers: list[RecordingFileReader]

    def create_reader(self, context: SourceReaderContext) -> RecordingFileReader:
        options, schema = self.options, self.schema
        chunk = int(context.config[CHUNK_BYTES_CONFIG])
        reader = RecordingFileReader(
            lambda: FileSplitReader(options, schema, chunk), FileRecordEmitter(), context
        )
        reader.calls = []
        self.readers.append(reader)
        return reader


def _write(directory: Path) -> None:
    for name, skew in (("behind", 0), ("ahead", SKEW_MS)):
        lines = "".join(f"{name}-{i},{skew + i * STEP_MS}\n" for i in range(ROWS))
        (directory / f"{name}.csv").write_text(lines)


def test_the_file_ahead_in_event_time_waits_and_every_row_comes_once(tmp_path: Path) -> None:
    _write(tmp_path)
    base = make_source({"path": str(tmp_path), "format": "csv"}, SCHEMA)
    source = RecordingFileSource(base.options, base.schema)
    source.readers = []
    strategy = (
        WatermarkStrategy.for_monotonous_timestamps()
        .with_timestamp_assigner(ColumnTimestampAssigner("ts"))
        .with_watermark_alignment("files", DRIFT_MS, update_interval=20)
    )
    with LocalRuntime(
        source,
        parallelism=2,
        reader_config={CHUNK_BYTES_CONFIG: FETCH_BYTES},
        watermark_strategy=strategy,
        auto_watermark_interval_ms=10,
    ) as runtime:
        runtime.start()
        rows = runtime.wait_finished(timeout=60)
        for subtask in range(2):
            event_time = runtime.reader_event_time(subtask)
            assert event_time is not None and event_time.watermark == MAX_WATERMARK

    names = Counter(r[0] for r in rows)
    assert len(names) == 2 * ROWS and set(names.values()) == {1}
    calls = [(r, c) for r in source.readers for c in r.calls]
    paused = [(r, c) for r, c in calls if c[0]]
    assert paused, "the reader of the file ahead never paused"
    ahead_id = next(iter(paused[0][1][0]))
    assert "ahead.csv" in ahead_id, paused[0]
    paused_at = paused[0][1][2][ahead_id]
    resumed_at = next(c[2] for _, c in calls if ahead_id in c[1])[ahead_id]
    # the file behind never gets within the drift (40 s of rows vs 100 s): the split ahead resumes
    # when the other reader finishes, having read no more than what was in flight when paused
    assert resumed_at - paused_at <= IN_FLIGHT_FETCHES * FETCH_BYTES, (paused_at, resumed_at)


def test_a_paused_split_is_passed_over_and_resumes_at_its_own_position(tmp_path: Path) -> None:
    _write(tmp_path)
    source = make_source({"path": str(tmp_path), "format": "csv"}, SCHEMA)
    ahead, behind = sorted(whole_files(source), key=lambda s: s.path)
    reader = FileSplitReader(source.options, source.schema, FETCH_BYTES)
    reader.handle_splits_changes(SplitsAddition([ahead, behind]))
    names: list[str] = []
    finished: set[str] = set()

    def fetch_once() -> None:
        records = reader.fetch()
        while records.next_split() is not None:
            for table, _ in records.records_of_current_split():
                if table is not None:
                    names.extend(table.column("name").to_pylist())
        finished.update(records.finished_splits())

    try:
        fetch_once()  # the first chunk of ahead.csv
        first = len(names)
        reader.pause_or_resume_splits([ahead], [])
        for _ in range(3):  # only behind.csv is read while ahead.csv is paused
            fetch_once()
        assert first > 0 and all(n.startswith("behind-") for n in names[first:]), names[first:][:3]
        reader.pause_or_resume_splits([], [ahead])
        resumed = len(names)
        fetch_once()  # ahead.csv again (first in line), right after its first chunk
        assert names[resumed] == f"ahead-{first}", names[resumed]
        while finished != {ahead.split_id, behind.split_id}:
            fetch_once()
    finally:
        reader.close()
    assert sorted(names) == sorted([f"ahead-{i}" for i in range(ROWS)] + [f"behind-{i}" for i in range(ROWS)])
