"""Whole-reader alignment when a split reader cannot pause splits (Flink's fallback).

With ``pipeline.watermark-alignment.allow-unaligned-source-splits=true`` a reader whose split
reader raises ``UnsupportedOperationError`` on pausing is aligned as a whole: the runtime stops
polling it while its watermark is beyond what the other readers allow (its fetchers stop at the full
queue). Two readers, one sequence partition each, partition 1 100 s ahead: reader 1 is blocked,
emits little until reader 0 comes within the drift, and every row still comes out exactly once.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence

import pytest

from connector_base import (
    ConnectorError,
    ReaderOutput,
    SourceReaderContext,
    SplitEnumeratorContext,
    SplitReader,
)
from connector_base.event_time import MAX_WATERMARK, WatermarkStrategy
from connector_base.runtime import LocalRuntime
from connector_base.split_reader import ALLOW_UNALIGNED_SOURCE_SPLITS_KEY
from connectors.sequence import SequenceOptions, SequenceSource
from connectors.sequence.enumerator import SequenceEnumerator
from connectors.sequence.record_emitter import Row, SequenceRecordEmitter
from connectors.sequence.source import SequenceSourceReader
from connectors.sequence.split import SequenceSplit, SequenceSplitState
from connectors.sequence.split_reader import FETCH_BATCH_CONFIG, SequenceSplitReader

ROWS = 20_000
STEP_MS = 2
SKEW_MS = 100_000
DRIFT_MS = 1_000
FETCH_ROWS = 16


class NoPauseSplitReader(SequenceSplitReader):
    """A split reader without split pausing (the ``SplitReader`` default raises)."""

    def pause_or_resume_splits(
        self, splits_to_pause: Sequence[SequenceSplit], splits_to_resume: Sequence[SequenceSplit]
    ) -> None:
        SplitReader.pause_or_resume_splits(self, splits_to_pause, splits_to_resume)


class OrderRecordingEmitter(SequenceRecordEmitter):
    """Notes every row's partition, in the order the readers emit them (across readers)."""

    def __init__(self, order: list[int], lock: threading.Lock) -> None:
        self._order = order
        self._lock = lock

    def emit_records(
        self, elements: Iterable[Row], output: ReaderOutput[Row], split_state: SequenceSplitState
    ) -> None:
        rows = list(elements)
        with self._lock:
            self._order.extend(r[0] for r in rows)
        super().emit_records(rows, output, split_state)


class OneSplitPerReaderEnumerator(SequenceEnumerator):
    """Assigns once every reader has registered, so partition ``i`` goes to reader ``i``."""

    def _assign(self) -> None:
        if len(self._context.registered_readers()) == self._context.current_parallelism():
            super()._assign()


class NoPauseSource(SequenceSource):
    """Two partitions read by split readers that cannot pause; emission order is recorded."""

    def __init__(self) -> None:
        super().__init__(SequenceOptions(partitions=2, rows_per_partition=ROWS))
        self.order: list[int] = []
        self.lock = threading.Lock()

    def create_enumerator(self, context: SplitEnumeratorContext[SequenceSplit]) -> SequenceEnumerator:
        return OneSplitPerReaderEnumerator(context, self.options.partitions, self.options.rows_per_partition)

    def create_reader(self, context: SourceReaderContext) -> SequenceSourceReader:
        return SequenceSourceReader(
            lambda: NoPauseSplitReader(batch=FETCH_ROWS),
            OrderRecordingEmitter(self.order, self.lock),
            context,
        )


def event_time(row: Row, _record_timestamp: int) -> int:
    partition, index, _ = row
    return index * STEP_MS + (SKEW_MS if partition == 1 else 0)


STRATEGY = (
    WatermarkStrategy.for_monotonous_timestamps()
    .with_timestamp_assigner(event_time)
    .with_watermark_alignment("seq", DRIFT_MS, update_interval=5)
)


def _runtime(source: NoPauseSource, allow_unaligned: bool) -> LocalRuntime[Row, SequenceSplit, object]:
    return LocalRuntime(
        source,
        parallelism=2,
        reader_config={
            FETCH_BATCH_CONFIG: FETCH_ROWS,
            ALLOW_UNALIGNED_SOURCE_SPLITS_KEY: str(allow_unaligned),
        },
        watermark_strategy=STRATEGY,
        auto_watermark_interval_ms=5,
    )


def test_a_reader_that_cannot_pause_splits_is_blocked_as_a_whole() -> None:
    source = NoPauseSource()
    with _runtime(source, allow_unaligned=True) as runtime:
        runtime.start()
        rows: list[Row] = runtime.wait_finished(timeout=60)
        times = [runtime.reader_event_time(i) for i in range(2)]
    assert all(t is not None and t.watermark == MAX_WATERMARK for t in times)
    counts = Counter((p, i) for p, i, _ in rows)
    assert len(counts) == 2 * ROWS and set(counts.values()) == {1}
    print(
        "blocks",
        [t.blocks for t in times if t],
        "early",
        source.order[: source.order.index(0) + 1].count(1) if 0 in source.order else None,
    )
    assert times[1] is not None and times[1].blocks > 0 and times[0] is not None and times[0].blocks == 0
    # partition 0 never comes within the drift of partition 1 (40 s of rows vs 100 s ahead): reader 1
    # emits only what it read before its first block, then waits for reader 0 to finish
    last_of_0 = len(source.order) - 1 - source.order[::-1].index(0)
    early = source.order[:last_of_0].count(1)
    assert early <= ROWS // 4, early


def test_without_the_option_a_reader_that_cannot_pause_splits_fails() -> None:
    with _runtime(NoPauseSource(), allow_unaligned=False) as runtime:
        runtime.start()
        with pytest.raises(ConnectorError, match="does not support pausing") as failure:
            runtime.wait_finished(timeout=60)
    assert ALLOW_UNALIGNED_SOURCE_SPLITS_KEY in str(failure.value)
