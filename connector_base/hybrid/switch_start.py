"""``SwitchStart``: where the next stage of a hybrid source starts when the previous one is read."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["SwitchStart", "SwitchStartKind"]


class SwitchStartKind(Enum):
    """The ways the next stage may start."""

    DERIVED = "derived"
    """At the previous stage's maximum event time (plus one millisecond), minus an overlap."""
    TIMESTAMP = "timestamp"
    """At a fixed timestamp."""
    CONFIGURED = "configured"
    """Where the next stage's own starting options say."""


@dataclass(frozen=True, slots=True)
class SwitchStart:
    """How the next stage starts; build it with ``derived``, ``timestamp`` or ``configured``."""

    kind: SwitchStartKind
    event_time_column: str | None = None
    overlap_ms: int = 0
    timestamp_ms: int | None = None

    def __post_init__(self) -> None:
        if self.kind is SwitchStartKind.DERIVED and not self.event_time_column:
            raise ValueError("a derived switch start needs an event time column")
        if self.kind is SwitchStartKind.TIMESTAMP and self.timestamp_ms is None:
            raise ValueError("a timestamp switch start needs a timestamp")
        if self.overlap_ms < 0:
            raise ValueError(f"overlap_ms must be >= 0, got {self.overlap_ms}")

    @classmethod
    def derived(cls, event_time_column: str, overlap_ms: int = 0) -> SwitchStart:
        """Start after the previous stage's maximum of ``event_time_column``, minus ``overlap_ms``."""
        return cls(SwitchStartKind.DERIVED, event_time_column=event_time_column, overlap_ms=overlap_ms)

    @classmethod
    def timestamp(cls, timestamp_ms: int) -> SwitchStart:
        """Start at ``timestamp_ms`` (milliseconds since the epoch)."""
        return cls(SwitchStartKind.TIMESTAMP, timestamp_ms=timestamp_ms)

    @classmethod
    def configured(cls) -> SwitchStart:
        """Start where the next stage's own options say."""
        return cls(SwitchStartKind.CONFIGURED)

    def starting_timestamp(self, previous_max_event_time_ms: int | None) -> int | None:
        """The timestamp the next stage starts at (``None``: its own options decide)."""
        match self.kind:
            case SwitchStartKind.DERIVED:
                if previous_max_event_time_ms is None:
                    return None
                return previous_max_event_time_ms + 1 - self.overlap_ms
            case SwitchStartKind.TIMESTAMP:
                return self.timestamp_ms
            case _:
                return None
