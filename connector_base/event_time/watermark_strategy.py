"""``WatermarkStrategy``: how a source's records get event times and watermarks."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Generic, TypeVar

from typing_extensions import override

from connector_base.event_time.input_activity import AlwaysCaughtUp, InputActivity
from connector_base.event_time.timestamp_assigner import RecordTimestampAssigner, TimestampAssigner
from connector_base.event_time.watermark_generator import (
    BoundedOutOfOrdernessWatermarks,
    NoWatermarksGenerator,
    WatermarkGenerator,
)
from connector_base.event_time.watermarks_with_idleness import WatermarksWithIdleness

__all__ = ["Duration", "WatermarkAlignmentParams", "WatermarkStrategy"]

T = TypeVar("T")
"""The record type."""

Duration = int | timedelta
"""A duration: milliseconds, or a ``timedelta``."""

DEFAULT_ALIGNMENT_UPDATE_INTERVAL_MS = 1000


def _to_ms(name: str, value: Duration, minimum: int) -> int:
    if isinstance(value, timedelta):
        ms = int(value / timedelta(milliseconds=1))
    elif isinstance(value, int) and not isinstance(value, bool):
        ms = value
    else:
        raise ValueError(f"{name} must be milliseconds (int) or a timedelta, got {value!r}")
    if ms < minimum:
        raise ValueError(f"{name} must be >= {minimum} ms, got {value!r}")
    return ms


@dataclass(frozen=True, slots=True)
class WatermarkAlignmentParams:
    """Watermark alignment (FLIP-182/217): splits more than ``max_drift_ms`` ahead of the group pause."""

    group: str
    max_drift_ms: int
    update_interval_ms: int = DEFAULT_ALIGNMENT_UPDATE_INTERVAL_MS

    def __post_init__(self) -> None:
        if not self.group:
            raise ValueError("watermark alignment needs a non-empty group name")
        if self.max_drift_ms <= 0 or self.update_interval_ms <= 0:
            raise ValueError(f"max_drift and update_interval must be > 0 ms: {self}")


@dataclass(frozen=True, slots=True)
class WatermarkStrategy(Generic[T]):
    """A ``TimestampAssigner`` plus a ``WatermarkGenerator`` factory, with idleness and alignment.

    Build one with a factory (``for_bounded_out_of_orderness``, ``for_monotonous_timestamps``,
    ``no_watermarks``, ``for_generator``) and refine it with the ``with_*`` methods, each of which
    returns a new strategy. A runtime creates one generator per split.
    """

    generator_factory: Callable[[], WatermarkGenerator[T]]
    timestamp_assigner: TimestampAssigner[T] = dataclasses.field(default_factory=RecordTimestampAssigner)
    idle_timeout_ms: int | None = None
    alignment: WatermarkAlignmentParams | None = None

    # --- factories ------------------------------------------------------------------------------
    @staticmethod
    def for_generator(factory: Callable[[], WatermarkGenerator[Any]]) -> WatermarkStrategy[Any]:
        """Watermarks from a generator of your own (``factory`` makes one per split)."""
        return WatermarkStrategy(factory)

    @staticmethod
    def for_bounded_out_of_orderness(max_out_of_orderness: Duration) -> WatermarkStrategy[Any]:
        """Records may be up to ``max_out_of_orderness`` late within a split."""
        bound = _to_ms("max_out_of_orderness", max_out_of_orderness, 0)
        return WatermarkStrategy(lambda: BoundedOutOfOrdernessWatermarks(bound))

    @staticmethod
    def for_monotonous_timestamps() -> WatermarkStrategy[Any]:
        """Timestamps never decrease within a split."""
        return WatermarkStrategy(lambda: BoundedOutOfOrdernessWatermarks(0))

    @staticmethod
    def no_watermarks() -> WatermarkStrategy[Any]:
        """No watermarks at all."""
        return WatermarkStrategy(NoWatermarksGenerator)

    # --- refinements ----------------------------------------------------------------------------
    def with_timestamp_assigner(
        self, assigner: TimestampAssigner[T] | Callable[[T, int], int]
    ) -> WatermarkStrategy[T]:
        """Event times from ``assigner`` (an assigner, or a function of (record, record timestamp))."""
        if not isinstance(assigner, TimestampAssigner):
            assigner = _FunctionAssigner(assigner)
        return dataclasses.replace(self, timestamp_assigner=assigner)

    def with_idleness(self, idle_timeout: Duration) -> WatermarkStrategy[T]:
        """Splits quiet for ``idle_timeout`` (caught up, not paused, no record) leave the minimum."""
        return dataclasses.replace(self, idle_timeout_ms=_to_ms("idle_timeout", idle_timeout, 1))

    def with_watermark_alignment(
        self,
        group: str,
        max_drift: Duration,
        update_interval: Duration = DEFAULT_ALIGNMENT_UPDATE_INTERVAL_MS,
    ) -> WatermarkStrategy[T]:
        """Pause splits whose watermark runs more than ``max_drift`` ahead of ``group``'s minimum."""
        params = WatermarkAlignmentParams(
            group, _to_ms("max_drift", max_drift, 1), _to_ms("update_interval", update_interval, 1)
        )
        return dataclasses.replace(self, alignment=params)

    # --- for runtimes ---------------------------------------------------------------------------
    def create_watermark_generator(self, activity: InputActivity | None = None) -> WatermarkGenerator[T]:
        """A new generator for one split; ``activity`` tells idleness whether the split is caught up."""
        generator = self.generator_factory()
        if self.idle_timeout_ms is None:
            return generator
        return WatermarksWithIdleness(
            generator, self.idle_timeout_ms, activity if activity is not None else AlwaysCaughtUp()
        )

    def create_timestamp_assigner(self) -> TimestampAssigner[T]:
        """The timestamp assigner."""
        return self.timestamp_assigner


class _FunctionAssigner(TimestampAssigner[T]):
    def __init__(self, fn: Callable[[T, int], int]) -> None:
        self._fn = fn

    @override
    def extract_timestamp(self, element: T, record_timestamp: int) -> int:
        return self._fn(element, record_timestamp)
