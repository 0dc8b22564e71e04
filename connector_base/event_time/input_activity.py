"""``InputActivity``: whether an input has read everything available, and since when.

The idleness rule of this project: a split is idle only when it has read everything its system
holds now (its head), is not paused by alignment, and no record came for the idle timeout. A
split with unread data, held back by back-pressure or paused, never goes idle (FLIP-471).
"""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["AlwaysCaughtUp", "InputActivity", "RelativeClock", "SplitActivity", "SystemClock"]


class RelativeClock(Protocol):
    """Milliseconds since some origin; never decreases."""

    def relative_time_ms(self) -> float:
        """The current reading."""


class SystemClock:
    """The monotonic system clock."""

    def relative_time_ms(self) -> float:
        """``time.monotonic()`` in milliseconds."""
        return time.monotonic() * 1000.0


class InputActivity(Protocol):
    """What an idleness timer needs to know about its input."""

    def relative_time_ms(self) -> float:
        """Now, on the clock of ``caught_up_since_ms``."""

    def caught_up_since_ms(self) -> float | None:
        """Since when the input is caught up and not paused, without a break; ``None`` if it is not now."""


class AlwaysCaughtUp:
    """An input with no head to compare with: idleness is then only "no record for the timeout"."""

    def __init__(self, clock: RelativeClock | None = None) -> None:
        self._clock: RelativeClock = clock if clock is not None else SystemClock()
        self._since = self._clock.relative_time_ms()

    def relative_time_ms(self) -> float:
        """The clock's reading."""
        return self._clock.relative_time_ms()

    def caught_up_since_ms(self) -> float | None:
        """When this object was made."""
        return self._since


class SplitActivity:
    """The activity of one split, fed by the reader: caught up (from its fetches) and paused.

    A split starts not caught up: until its split reader reports that it reached the head, it
    may have unread data. Threading: task thread only.
    """

    def __init__(self, clock: RelativeClock | None = None) -> None:
        self._clock: RelativeClock = clock if clock is not None else SystemClock()
        self._caught_up = False
        self._paused = False
        self._since: float | None = None

    @property
    def caught_up(self) -> bool:
        """Whether the split reader last reported that the split is at its head."""
        return self._caught_up

    @property
    def paused(self) -> bool:
        """Whether the split is paused (alignment)."""
        return self._paused

    def set_caught_up(self, caught_up: bool) -> None:
        """The split reader's latest report."""
        if caught_up != self._caught_up:
            self._caught_up = caught_up
            self._update()

    def set_paused(self, paused: bool) -> None:
        """Paused or resumed by alignment."""
        if paused != self._paused:
            self._paused = paused
            self._update()

    def _update(self) -> None:
        eligible = self._caught_up and not self._paused
        if not eligible:
            self._since = None
        elif self._since is None:
            self._since = self._clock.relative_time_ms()

    def relative_time_ms(self) -> float:
        """The clock's reading."""
        return self._clock.relative_time_ms()

    def caught_up_since_ms(self) -> float | None:
        """Since when the split is caught up and unpaused, or ``None``."""
        return self._since
