"""``WatermarksWithIdleness``: a generator that marks its input idle after a quiet period."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import override

from connector_base.event_time.input_activity import InputActivity
from connector_base.event_time.watermark_generator import WatermarkGenerator
from connector_base.event_time.watermark_output import WatermarkOutput

__all__ = ["WatermarksWithIdleness"]

T = TypeVar("T")
"""The record type."""


class WatermarksWithIdleness(WatermarkGenerator[T], Generic[T]):
    """Wraps a generator; marks the input idle once it is quiet for ``idle_timeout_ms``.

    Quiet means: caught up and not paused (``activity``), and no record, both for the timeout.
    While idle, the inner generator is not asked to emit; a record, or the input falling behind
    its head or being paused, makes it active again.
    """

    def __init__(self, inner: WatermarkGenerator[T], idle_timeout_ms: int, activity: InputActivity) -> None:
        if idle_timeout_ms <= 0:
            raise ValueError(f"idle_timeout_ms must be > 0, got {idle_timeout_ms}")
        self._inner = inner
        self._timeout_ms = idle_timeout_ms
        self._activity = activity
        self._last_event = activity.relative_time_ms()
        self._idle = False

    @property
    def is_idle(self) -> bool:
        """Whether the input was marked idle at the last periodic emit."""
        return self._idle

    @override
    def on_event(self, event: T, event_timestamp: int, output: WatermarkOutput) -> None:
        self._inner.on_event(event, event_timestamp, output)
        self._on_record(output)

    @override
    def on_batch(self, batch: Any, event_timestamps: Sequence[int], output: WatermarkOutput) -> None:
        self._inner.on_batch(batch, event_timestamps, output)
        self._on_record(output)

    def _on_record(self, output: WatermarkOutput) -> None:
        self._last_event = self._activity.relative_time_ms()
        if self._idle:
            self._idle = False
            output.mark_active()

    @override
    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        since = self._activity.caught_up_since_ms()
        now = self._activity.relative_time_ms()
        quiet = since is not None and now - max(since, self._last_event) >= self._timeout_ms
        if quiet:
            if not self._idle:
                self._idle = True
                output.mark_idle()
            return
        if self._idle:
            self._idle = False
            output.mark_active()
        self._inner.on_periodic_emit(output)
