"""``WatermarkGenerator`` and the two everyday ones: bounded out-of-orderness and none."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from typing_extensions import override

from connector_base.event_time.watermark import MIN_WATERMARK, NO_TIMESTAMP, Watermark
from connector_base.event_time.watermark_output import WatermarkOutput

__all__ = ["BoundedOutOfOrdernessWatermarks", "NoWatermarksGenerator", "WatermarkGenerator"]

T_contra = TypeVar("T_contra", contravariant=True)
"""The record type."""


class WatermarkGenerator(ABC, Generic[T_contra]):
    """Turns event timestamps into watermarks, for one input (one split).

    ``on_event`` sees every record; ``on_periodic_emit`` is called every auto-watermark interval
    and is where periodic generators emit. Both run on the reader's task thread.
    """

    @abstractmethod
    def on_event(self, event: T_contra, event_timestamp: int, output: WatermarkOutput) -> None:
        """One record with its event time."""

    def on_batch(self, batch: Any, event_timestamps: Sequence[int], output: WatermarkOutput) -> None:
        """The records of a batch; the default calls ``on_event(batch, ts, output)`` per timestamp.

        Generators that only look at timestamps override it to take the batch in one step.
        """
        on_event = self.on_event
        for ts in event_timestamps:
            on_event(batch, ts, output)

    @abstractmethod
    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        """Emit a watermark now if there is one to emit."""


class BoundedOutOfOrdernessWatermarks(WatermarkGenerator[Any]):
    """Records may arrive up to ``max_out_of_orderness_ms`` late: watermark = max seen - bound - 1.

    With a bound of 0 this is the generator for monotonous timestamps. Records without a timestamp
    (``NO_TIMESTAMP``) do not move it.
    """

    def __init__(self, max_out_of_orderness_ms: int) -> None:
        if max_out_of_orderness_ms < 0:
            raise ValueError(f"max_out_of_orderness_ms must be >= 0, got {max_out_of_orderness_ms}")
        self.max_out_of_orderness_ms = max_out_of_orderness_ms
        self._max_timestamp = NO_TIMESTAMP

    @property
    def max_timestamp(self) -> int:
        """The largest event time seen (``NO_TIMESTAMP`` before any)."""
        return self._max_timestamp

    @override
    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None:
        if event_timestamp > self._max_timestamp:
            self._max_timestamp = event_timestamp

    @override
    def on_batch(self, batch: Any, event_timestamps: Sequence[int], output: WatermarkOutput) -> None:
        if len(event_timestamps):
            vector_max = getattr(event_timestamps, "max", None)  # numpy: one C call
            latest = int(vector_max()) if callable(vector_max) else max(event_timestamps)
            if latest > self._max_timestamp:
                self._max_timestamp = latest

    @override
    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        if self._max_timestamp == NO_TIMESTAMP:
            return
        output.emit_watermark(
            Watermark(max(MIN_WATERMARK, self._max_timestamp - self.max_out_of_orderness_ms - 1))
        )


class NoWatermarksGenerator(WatermarkGenerator[Any]):
    """Never emits a watermark (event time is not used)."""

    @override
    def on_event(self, event: Any, event_timestamp: int, output: WatermarkOutput) -> None:
        pass

    @override
    def on_periodic_emit(self, output: WatermarkOutput) -> None:
        pass
