"""``WatermarkOutput``: where a ``WatermarkGenerator`` puts watermarks and idleness."""

from __future__ import annotations

from typing import Protocol

from connector_base.event_time.watermark import Watermark

__all__ = ["WatermarkOutput"]


class WatermarkOutput(Protocol):
    """Receives watermarks and the idle/active status of one input (a split, or a whole reader)."""

    def emit_watermark(self, watermark: Watermark) -> None:
        """Event time reached ``watermark``; implies the input is active."""

    def mark_idle(self) -> None:
        """The input has nothing to say for now: leave it out of the minimum downstream."""

    def mark_active(self) -> None:
        """The input counts again (it will emit a watermark or records soon)."""
