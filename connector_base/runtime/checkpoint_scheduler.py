"""``CheckpointScheduler``: when the local runtime takes its next periodic checkpoint (FLIP-309).

The interval is ``checkpoint.interval`` while no source reports backlog and
``checkpoint.interval-during-backlog`` while one does; without the latter, no periodic checkpoint
is taken during backlog (FLIP-309's rule), and without the former, none at all outside it. The
next checkpoint is due one current interval after the last one (or after the start), so leaving a
backlog whose last checkpoint is older than the normal interval checkpoints at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from connector_base.errors import InvalidOptionError

__all__ = [
    "CHECKPOINT_INTERVAL",
    "CHECKPOINT_INTERVAL_DURING_BACKLOG",
    "CheckpointConfig",
    "CheckpointScheduler",
    "parse_interval_ms",
]

CHECKPOINT_INTERVAL = "checkpoint.interval"
CHECKPOINT_INTERVAL_DURING_BACKLOG = "checkpoint.interval-during-backlog"

_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|min|m|h)?\s*$", re.IGNORECASE)
_UNIT_MS = {None: 1, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000}


def parse_interval_ms(key: str, raw: object) -> int | None:
    """A positive interval: milliseconds as a number, or with a unit (``500ms``, ``30s``, ``2min``)."""
    if raw is None:
        return None
    match = _DURATION.match(str(raw))
    if match is None or int(match.group(1)) < 1:
        raise InvalidOptionError(key, raw, "a positive duration such as 500, 500ms, 30s, 2min or 1h")
    unit = match.group(2).lower() if match.group(2) else None
    return int(match.group(1)) * _UNIT_MS[unit]


@dataclass(frozen=True, slots=True)
class CheckpointConfig:
    """Periodic checkpointing of the local runtime; ``None`` intervals mean no periodic checkpoints."""

    interval_ms: int | None = None
    interval_during_backlog_ms: int | None = None

    @classmethod
    def from_options(cls, options: Mapping[str, object]) -> CheckpointConfig:
        """Read ``checkpoint.interval`` and ``checkpoint.interval-during-backlog``; other keys are ignored."""
        return cls(
            parse_interval_ms(CHECKPOINT_INTERVAL, options.get(CHECKPOINT_INTERVAL)),
            parse_interval_ms(
                CHECKPOINT_INTERVAL_DURING_BACKLOG, options.get(CHECKPOINT_INTERVAL_DURING_BACKLOG)
            ),
        )


class CheckpointScheduler:
    """Tracks the backlog status and the last checkpoint; says when the next one is due.

    Threading: used from the runtime's coordinator thread only.
    """

    def __init__(self, config: CheckpointConfig, clock: Callable[[], float]) -> None:
        self._config = config
        self._clock = clock
        self._last = clock()
        self._backlog = False

    @property
    def processing_backlog(self) -> bool:
        """Whether the source reports backlog now."""
        return self._backlog

    def set_processing_backlog(self, backlog: bool) -> None:
        """The source's new backlog status (the interval switches at once)."""
        self._backlog = backlog

    def interval_ms(self) -> int | None:
        """The interval that applies now (``None``: no periodic checkpoints now)."""
        return self._config.interval_during_backlog_ms if self._backlog else self._config.interval_ms

    def next_due(self) -> float | None:
        """The clock time of the next checkpoint, or ``None`` when none is scheduled now."""
        interval = self.interval_ms()
        return None if interval is None else self._last + interval / 1000.0

    def is_due(self) -> bool:
        """Whether a periodic checkpoint should be taken now."""
        due = self.next_due()
        return due is not None and self._clock() >= due

    def checkpoint_taken(self) -> None:
        """A checkpoint (periodic or requested) completed now."""
        self._last = self._clock()
