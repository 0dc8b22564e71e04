"""The idleness rule: idle only when caught up, not paused, and quiet for the timeout."""

from __future__ import annotations

from connector_base.event_time import (
    ProgressiveTimestampsAndWatermarks,
    SplitActivity,
    WatermarkStrategy,
    WatermarksWithIdleness,
)
from connector_base.event_time.watermark_generator import BoundedOutOfOrdernessWatermarks
from unit_tests.connector_base.event_time.test_watermark_generators import RecordingOutput


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def relative_time_ms(self) -> float:
        return self.now


Setup = tuple[FakeClock, SplitActivity, WatermarksWithIdleness[object], RecordingOutput]


def _setup(timeout: int = 100) -> Setup:
    clock = FakeClock()
    activity = SplitActivity(clock)
    gen: WatermarksWithIdleness[object] = WatermarksWithIdleness(
        BoundedOutOfOrdernessWatermarks(0), timeout, activity
    )
    return clock, activity, gen, RecordingOutput()


def test_a_split_with_unread_data_never_goes_idle() -> None:
    clock, activity, gen, out = _setup()
    gen.on_event("r", 10, out)
    clock.now = 10_000  # a long time without records, but the reader never reported it caught up
    gen.on_periodic_emit(out)
    assert "idle" not in out.events and not gen.is_idle


def test_caught_up_and_quiet_for_the_timeout_goes_idle_and_a_record_wakes_it() -> None:
    clock, activity, gen, out = _setup()
    gen.on_event("r", 10, out)
    clock.now = 50
    activity.set_caught_up(True)
    clock.now = 140  # caught up for 90 ms only
    gen.on_periodic_emit(out)
    assert not gen.is_idle
    clock.now = 150  # caught up for 100 ms, last record 150 ms ago
    gen.on_periodic_emit(out)
    assert gen.is_idle and out.events[-1] == "idle"
    gen.on_event("r", 20, out)
    assert not gen.is_idle and out.events[-1] == "active"


def test_a_paused_split_never_goes_idle_and_the_quiet_period_restarts_after_resume() -> None:
    clock, activity, gen, out = _setup()
    activity.set_caught_up(True)
    activity.set_paused(True)
    clock.now = 1_000
    gen.on_periodic_emit(out)
    assert not gen.is_idle
    activity.set_paused(False)
    clock.now = 1_099
    gen.on_periodic_emit(out)
    assert not gen.is_idle
    clock.now = 1_100
    gen.on_periodic_emit(out)
    assert gen.is_idle


def test_an_idle_split_that_falls_behind_its_head_is_active_again_before_any_record() -> None:
    clock, activity, gen, out = _setup()
    activity.set_caught_up(True)
    clock.now = 200
    gen.on_periodic_emit(out)
    assert gen.is_idle
    activity.set_caught_up(False)  # the head moved: data to read
    gen.on_periodic_emit(out)
    assert not gen.is_idle and out.events[-1] == "active"


def test_reader_output_minimum_over_splits_excludes_idle_ones() -> None:
    clock = FakeClock()
    listener = RecordingOutput()
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_idleness(100)
    downstream: list[object] = []

    class Down:
        def collect(self, record: object) -> None:
            downstream.append(record)

        def collect_batch(self, batch: list[object]) -> None:
            downstream.extend(batch)

    pw: ProgressiveTimestampsAndWatermarks[object] = ProgressiveTimestampsAndWatermarks(
        strategy, Down(), listener, clock
    )
    a = pw.create_output_for_split("a")
    b = pw.create_output_for_split("b")
    a.collect("a1", 1_000)
    b.collect_batch(["b1", "b2"], [200, 300])
    pw.emit_periodic_watermark()
    assert pw.split_watermarks() == {"a": 999, "b": 299} and pw.current_watermark == 299
    b.set_caught_up(True)  # b read everything; it stays quiet
    clock.now = 100
    pw.emit_periodic_watermark()
    assert pw.idle_splits() == {"b"} and pw.current_watermark == 999
    a.set_caught_up(True)
    clock.now = 250
    pw.emit_periodic_watermark()
    assert pw.is_idle and listener.events[-1] == "idle"
    pw.release_output_for_split("a")
    assert pw.split_watermarks() == {"b": 299}
    assert downstream == ["a1", "b1", "b2"]
