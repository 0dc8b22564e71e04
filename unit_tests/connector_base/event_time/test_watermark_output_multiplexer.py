"""The reader's watermark is the minimum over splits that are not idle; all idle = reader idle."""

from __future__ import annotations

from connector_base.event_time import Watermark, WatermarkOutputMultiplexer
from unit_tests.connector_base.event_time.test_watermark_generators import RecordingOutput


def test_min_over_active_outputs_never_goes_back() -> None:
    out = RecordingOutput()
    mux = WatermarkOutputMultiplexer(out)
    mux.register_new_output("a")
    mux.register_new_output("b")
    a, b = mux.get_immediate_output("a"), mux.get_immediate_output("b")
    a.emit_watermark(Watermark(100))
    assert out.events == []  # b is still at the minimum
    b.emit_watermark(Watermark(50))
    assert out.events == [50]
    b.emit_watermark(Watermark(150))
    assert out.events == [50, 100]
    a.emit_watermark(Watermark(90))  # a split's own watermark never goes back either
    assert mux.watermarks() == {"a": 100, "b": 150}
    assert mux.combined_watermark == 100


def test_idle_outputs_leave_the_minimum_and_all_idle_marks_the_reader_idle() -> None:
    out = RecordingOutput()
    mux = WatermarkOutputMultiplexer(out)
    for sid in ("a", "b"):
        mux.register_new_output(sid)
    a, b = mux.get_immediate_output("a"), mux.get_immediate_output("b")
    a.emit_watermark(Watermark(500))
    b.mark_idle()
    assert out.events == [500]  # b left the minimum
    a.mark_idle()
    assert out.events == [500, "idle"] and mux.is_idle
    b.emit_watermark(Watermark(200))  # a watermark makes b active; the reader does not go back
    assert out.events == [500, "idle", "active"]
    assert mux.combined_watermark == 500
    assert mux.idle_outputs() == {"a"}


def test_deferred_outputs_wait_for_the_periodic_emit_and_unregistering_releases() -> None:
    out = RecordingOutput()
    mux = WatermarkOutputMultiplexer(out)
    mux.register_new_output("a")
    mux.register_new_output("b")
    mux.get_deferred_output("a").emit_watermark(Watermark(10))
    mux.get_deferred_output("b").emit_watermark(Watermark(20))
    assert out.events == []
    mux.on_periodic_emit()
    assert out.events == [10]
    assert mux.unregister_output("a")  # a finished: b alone decides
    assert out.events == [10, 20]
    assert mux.unregister_output("b") and mux.is_idle
    assert out.events == [10, 20, "idle"]
