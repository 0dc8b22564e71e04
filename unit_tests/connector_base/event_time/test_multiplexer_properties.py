"""Property test: the reader watermark is the non-decreasing minimum over the active splits."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from connector_base.event_time import MIN_WATERMARK, Watermark, WatermarkOutputMultiplexer
from unit_tests.connector_base.event_time.test_watermark_generators import RecordingOutput

SPLITS = ["a", "b", "c"]
OPS = st.lists(
    st.tuples(
        st.sampled_from(["emit", "idle", "active", "release"]), st.sampled_from(SPLITS), st.integers(0, 1_000)
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_combined_watermark_is_the_non_decreasing_min_over_active_splits(
    ops: list[tuple[str, str, int]],
) -> None:
    out = RecordingOutput()
    mux = WatermarkOutputMultiplexer(out)
    model: dict[str, list[int | bool]] = {}
    for sid in SPLITS:
        mux.register_new_output(sid)
        model[sid] = [MIN_WATERMARK, False]
    emitted = MIN_WATERMARK
    for op, sid, ts in ops:
        if sid not in model:
            continue
        if op == "release":
            mux.unregister_output(sid)
            del model[sid]
        else:
            output = mux.get_immediate_output(sid)
            if op == "emit":
                output.emit_watermark(Watermark(ts))
                model[sid] = [max(int(model[sid][0]), ts), False]
            elif op == "idle":
                output.mark_idle()
                model[sid][1] = True
            else:
                output.mark_active()
                model[sid][1] = False
        active = [int(wm) for wm, idle in model.values() if not idle]
        if active:
            emitted = max(emitted, min(active))
            assert mux.combined_watermark == emitted
            assert not mux.is_idle
        else:
            assert mux.is_idle and out.events[-1] == "idle"
    marks = [e for e in out.events if isinstance(e, int)]
    assert marks == sorted(set(marks))  # strictly increasing: never back, never repeated
