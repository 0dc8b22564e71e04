"""Watermark generators, strategies and timestamp assigners (no threads, no network)."""

from __future__ import annotations

from datetime import timedelta

import pyarrow as pa
import pytest

from connector_base.event_time import (
    NO_TIMESTAMP,
    BoundedOutOfOrdernessWatermarks,
    ColumnTimestampAssigner,
    RecordTimestampAssigner,
    Watermark,
    WatermarkStrategy,
    WatermarksWithIdleness,
)


class RecordingOutput:
    def __init__(self) -> None:
        self.events: list[object] = []

    def emit_watermark(self, watermark: Watermark) -> None:
        self.events.append(watermark.timestamp)

    def mark_idle(self) -> None:
        self.events.append("idle")

    def mark_active(self) -> None:
        self.events.append("active")


def test_bounded_out_of_orderness_emits_max_minus_bound_minus_one_only_periodically() -> None:
    gen = BoundedOutOfOrdernessWatermarks(100)
    out = RecordingOutput()
    gen.on_periodic_emit(out)
    assert out.events == []  # nothing seen, nothing to say
    gen.on_event("a", 1_000, out)
    gen.on_event("b", 900, out)  # late within the bound: does not move it back
    assert out.events == []  # on_event never emits
    gen.on_periodic_emit(out)
    gen.on_batch(None, [1_500, 1_200, NO_TIMESTAMP], out)
    gen.on_periodic_emit(out)
    assert out.events == [899, 1_399]


def test_monotonous_and_no_watermarks_strategies() -> None:
    out = RecordingOutput()
    mono = WatermarkStrategy.for_monotonous_timestamps().create_watermark_generator()
    mono.on_event("x", 50, out)
    mono.on_periodic_emit(out)
    none = WatermarkStrategy.no_watermarks().create_watermark_generator()
    none.on_event("x", 50, out)
    none.on_periodic_emit(out)
    assert out.events == [49]


def test_strategy_refinements_return_new_strategies_and_validate() -> None:
    base = WatermarkStrategy.for_bounded_out_of_orderness(timedelta(seconds=2))
    aligned = base.with_idleness(500).with_watermark_alignment("g", timedelta(seconds=5), 50)
    assert base.idle_timeout_ms is None and base.alignment is None
    assert aligned.idle_timeout_ms == 500
    assert aligned.alignment is not None
    assert (aligned.alignment.group, aligned.alignment.max_drift_ms) == ("g", 5_000)
    assert aligned.alignment.update_interval_ms == 50
    assert isinstance(aligned.create_watermark_generator(), WatermarksWithIdleness)
    with pytest.raises(ValueError, match="max_out_of_orderness"):
        WatermarkStrategy.for_bounded_out_of_orderness(-1)
    with pytest.raises(ValueError, match="idle_timeout"):
        base.with_idleness(0)
    with pytest.raises(ValueError, match="max_drift"):
        base.with_watermark_alignment("g", 0)
    with pytest.raises(ValueError, match="group"):
        base.with_watermark_alignment("", 10)


def test_timestamp_assigners() -> None:
    batch = pa.RecordBatch.from_pydict(
        {
            "v": [1, 2, 3],
            "ts": pa.array([1_000_000, None, 3_000_000], pa.timestamp("us", tz="UTC")),
            "ms": [10, 20, 30],
        }
    )
    assert list(ColumnTimestampAssigner("ts").extract_timestamps(batch, None)) == [1_000, NO_TIMESTAMP, 3_000]
    assert list(ColumnTimestampAssigner("ms").extract_timestamps(batch, None)) == [10, 20, 30]
    with pytest.raises(ValueError, match="'nope' is not in the records"):
        ColumnTimestampAssigner("nope").extract_timestamps(batch, None)
    assert list(RecordTimestampAssigner().extract_timestamps(batch, [7, 8, 9])) == [7, 8, 9]
    assert list(RecordTimestampAssigner().extract_timestamps(batch, None)) == [NO_TIMESTAMP] * 3
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda r, ts: r[0] * 10)
    assert list(strategy.create_timestamp_assigner().extract_timestamps([(1,), (2,)], None)) == [10, 20]
