"""``WatermarkOutputMultiplexer``: one watermark from many inputs (splits): the minimum of the active ones."""

from __future__ import annotations

from connector_base.event_time.watermark import MIN_WATERMARK, Watermark
from connector_base.event_time.watermark_output import WatermarkOutput

__all__ = ["WatermarkOutputMultiplexer"]


class _OutputState:
    __slots__ = ("watermark", "idle")

    def __init__(self) -> None:
        self.watermark = MIN_WATERMARK
        self.idle = False


class _PartialOutput:
    """The output of one input; ``immediate`` outputs update the combined watermark at once."""

    def __init__(self, state: _OutputState, mux: WatermarkOutputMultiplexer, immediate: bool) -> None:
        self._state = state
        self._mux = mux
        self._immediate = immediate

    def emit_watermark(self, watermark: Watermark) -> None:
        state = self._state
        state.idle = False
        if watermark.timestamp > state.watermark:
            state.watermark = watermark.timestamp
        if self._immediate:
            self._mux.update_combined_watermark()

    def mark_idle(self) -> None:
        self._state.idle = True
        if self._immediate:
            self._mux.update_combined_watermark()

    def mark_active(self) -> None:
        self._state.idle = False
        if self._immediate:
            self._mux.update_combined_watermark()


class WatermarkOutputMultiplexer:
    """Combines the watermarks of registered inputs into ``underlying``.

    The combined watermark is the minimum over inputs that are not idle, and never goes back.
    When every input is idle (or none is registered), ``underlying`` is marked idle. Each input
    has an immediate output (a change is combined at once) and a deferred one (combined at the
    next ``on_periodic_emit``). A watermark emitted on an input marks it active.

    Threading: one thread (the reader's task thread).
    """

    def __init__(self, underlying: WatermarkOutput) -> None:
        self._underlying = underlying
        self._states: dict[str, _OutputState] = {}
        self._combined = MIN_WATERMARK
        self._idle = False

    def register_new_output(self, output_id: str) -> None:
        """Add an input, at the minimum watermark and active."""
        if output_id in self._states:
            raise ValueError(f"an output with id {output_id!r} is already registered")
        self._states[output_id] = _OutputState()

    def unregister_output(self, output_id: str) -> bool:
        """Remove an input (a finished split); ``True`` if it was registered."""
        removed = self._states.pop(output_id, None) is not None
        if removed:
            self.update_combined_watermark()
        return removed

    def get_immediate_output(self, output_id: str) -> WatermarkOutput:
        """The output of ``output_id`` whose changes are combined at once."""
        return _PartialOutput(self._state(output_id), self, immediate=True)

    def get_deferred_output(self, output_id: str) -> WatermarkOutput:
        """The output of ``output_id`` whose changes wait for ``on_periodic_emit``."""
        return _PartialOutput(self._state(output_id), self, immediate=False)

    def _state(self, output_id: str) -> _OutputState:
        state = self._states.get(output_id)
        if state is None:
            raise KeyError(f"no output registered with id {output_id!r}")
        return state

    def on_periodic_emit(self) -> None:
        """Combine what the deferred outputs received."""
        self.update_combined_watermark()

    def update_combined_watermark(self) -> None:
        """Recompute the combined watermark and idleness, and tell ``underlying`` what changed."""
        active = [s.watermark for s in self._states.values() if not s.idle]
        if not active:
            if not self._idle:
                self._idle = True
                self._underlying.mark_idle()
            return
        if self._idle:
            self._idle = False
            self._underlying.mark_active()
        lowest = min(active)
        if lowest > self._combined:
            self._combined = lowest
            self._underlying.emit_watermark(Watermark(lowest))

    @property
    def combined_watermark(self) -> int:
        """The last combined watermark (``MIN_WATERMARK`` before any)."""
        return self._combined

    @property
    def is_idle(self) -> bool:
        """Whether every input is idle (or none is registered)."""
        return self._idle or not self._states

    def watermarks(self) -> dict[str, int]:
        """Each input's own watermark."""
        return {k: s.watermark for k, s in self._states.items()}

    def idle_outputs(self) -> set[str]:
        """The inputs marked idle."""
        return {k for k, s in self._states.items() if s.idle}
