"""``WatermarkAlignmentCoordinator``: the max allowed watermark of an alignment group (FLIP-182)."""

from __future__ import annotations

from connector_base.event_time.watermark import MAX_WATERMARK, MIN_WATERMARK
from connector_base.event_time.watermark_strategy import WatermarkAlignmentParams

__all__ = ["WatermarkAlignmentCoordinator"]


class WatermarkAlignmentCoordinator:
    """Collects the readers' watermarks of one group and says how far any split may run ahead.

    The max allowed watermark is the minimum watermark over the readers that reported one and
    are not idle, plus ``max_drift_ms``; with no such reader, nothing is held back. A reader
    without a watermark yet (one of its splits has emitted nothing) is left out, as in Flink, so
    an empty split cannot stop the others for good (give it an idle timeout to leave the minimum
    of its own reader). Readers pause the splits whose own watermark is beyond it.

    Threading: the runtime's coordinator thread only.
    """

    def __init__(self, params: WatermarkAlignmentParams) -> None:
        self.params = params
        self._reported: dict[int, int] = {}
        self._idle: set[int] = set()

    def report(self, subtask: int, watermark: int, idle: bool) -> None:
        """A reader's current watermark and whether it is idle."""
        self._reported[subtask] = watermark
        if idle:
            self._idle.add(subtask)
        else:
            self._idle.discard(subtask)

    def forget(self, subtask: int) -> None:
        """A reader is gone (failed and replaced): its next report starts afresh."""
        self._reported.pop(subtask, None)
        self._idle.discard(subtask)

    def max_allowed_watermark(self, excluding: int | None = None) -> int:
        """The group's minimum active watermark plus the drift (``MAX_WATERMARK`` if none is active).

        With ``excluding``, that reader's report is left out: a reader combines the answer with
        its own current watermark, which is fresher than its last report.
        """
        active = [
            wm
            for subtask, wm in self._reported.items()
            if subtask not in self._idle and subtask != excluding and wm != MIN_WATERMARK
        ]
        if not active:
            return MAX_WATERMARK
        return min(MAX_WATERMARK, min(active) + self.params.max_drift_ms)
