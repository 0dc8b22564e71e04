"""Idleness in the local runtime: caught-up, quiet splits go idle; splits with unread data never do."""

from __future__ import annotations

import time

from connector_base.event_time import WatermarkStrategy
from connector_base.runtime import LocalRuntime
from connectors.sequence import SequenceOptions, SequenceSource
from connectors.sequence.record_emitter import Row

IDLE_TIMEOUT_MS = 200


def _strategy() -> WatermarkStrategy[Row]:
    return (
        WatermarkStrategy.for_monotonous_timestamps()
        .with_timestamp_assigner(lambda row, _ts: row[1] * 10)
        .with_idleness(IDLE_TIMEOUT_MS)
    )


def _history_within(source: SequenceSource, seconds: float) -> list[int | str]:
    with LocalRuntime(source, watermark_strategy=_strategy(), auto_watermark_interval_ms=20) as runtime:
        runtime.start()
        time.sleep(seconds)
        event_time = runtime.reader_event_time(0)
        assert event_time is not None
        history = event_time.history_snapshot()
        assert runtime.record_count() > 0
    return history


def test_caught_up_quiet_splits_go_idle_and_a_new_row_wakes_the_reader() -> None:
    # two rows a second per partition: after each, both splits are caught up and quiet for 500 ms
    source = SequenceSource(
        SequenceOptions(partitions=2, continuous=True, rows_per_second=2, start_epoch_s=time.time())
    )
    history = _history_within(source, 2.5)
    assert "idle" in history, history
    after_idle = history[history.index("idle") + 1 :]
    assert "active" in after_idle, history  # a new row makes the reader count again


def test_a_split_paused_by_alignment_never_goes_idle() -> None:
    # partition 1 runs 100 s ahead in event time and is paused; its rows keep coming (unread), and
    # it is quiet for far longer than the idle timeout, yet it must not leave the minimum
    source = SequenceSource(
        SequenceOptions(partitions=2, continuous=True, rows_per_second=50, start_epoch_s=time.time())
    )
    strategy = (
        WatermarkStrategy.for_monotonous_timestamps()
        .with_timestamp_assigner(lambda row, _ts: row[1] * 10 + (100_000 if row[0] == 1 else 0))
        .with_idleness(IDLE_TIMEOUT_MS)
        .with_watermark_alignment("seq", 1_000, update_interval=20)
    )
    with LocalRuntime(source, watermark_strategy=strategy, auto_watermark_interval_ms=20) as runtime:
        runtime.start()
        time.sleep(1.5)
        event_time = runtime.reader_event_time(0)
        assert event_time is not None
        paused, idle = event_time.paused_snapshot(), event_time.idle_splits_snapshot()
    assert paused == {"p1"} and "p1" not in idle, (paused, idle)
