"""``Watermark``: a point in event time; no record with a smaller timestamp is expected after it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["MAX_WATERMARK", "MIN_WATERMARK", "NO_TIMESTAMP", "Watermark"]

NO_TIMESTAMP: Final = -(2**63)
"""A record without a timestamp (Flink's ``TimestampAssigner.NO_TIMESTAMP``)."""
MIN_WATERMARK: Final = -(2**63)
"""The watermark before any event: nothing is known yet."""
MAX_WATERMARK: Final = 2**63 - 1
"""The watermark at the end of input: every record has been seen."""


@dataclass(frozen=True, slots=True, order=True)
class Watermark:
    """Event time ``timestamp`` (epoch milliseconds) has been reached: later records are not earlier."""

    timestamp: int

    def __post_init__(self) -> None:
        if not MIN_WATERMARK <= self.timestamp <= MAX_WATERMARK:
            raise ValueError(f"watermark timestamp {self.timestamp} is outside the 64-bit range")
