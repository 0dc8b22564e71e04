"""The event-time options every connector accepts on Spark (``eventTime.*``, ``alignment.maxDrift``).

They are the bridge's, not a connector's: ``SourceDataSource`` takes them out of the options before
the connector parses the rest, so the names are the same for every format. See docs/event-time.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from connector_base.errors import InvalidOptionError
from connector_base.spark.read_limit_options import parse_duration_ms

__all__ = ["EVENT_TIME_OPTION_NAMES", "Alignment", "EventTimeOptions"]

ALIGNMENT = "eventTime.alignment"
MAX_DRIFT = "alignment.maxDrift"
IDLE_TIMEOUT = "eventTime.idleTimeout"
COLUMN = "eventTime.column"
FAIL_ON_LATE_SPLIT = "eventTime.failOnLateSplit"

EVENT_TIME_OPTION_NAMES = (ALIGNMENT, MAX_DRIFT, IDLE_TIMEOUT, COLUMN, FAIL_ON_LATE_SPLIT)
"""The option names, as documented (matched case-insensitively)."""

DEFAULT_IDLE_TIMEOUT_MS = 60_000
"""A split that has read everything and whose head has not moved for this long stops holding the cut."""
DEFAULT_MAX_DRIFT_MS = 0
"""By default the cut stays at the slowest non-idle split's newest record."""


class Alignment(Enum):
    """How the driver admits records by event time."""

    OFF = "off"
    CUT = "cut"


@dataclass(frozen=True, slots=True)
class EventTimeOptions:
    """Validated event-time options of one query."""

    alignment: Alignment = Alignment.OFF
    max_drift_ms: int = DEFAULT_MAX_DRIFT_MS
    idle_timeout_ms: int = DEFAULT_IDLE_TIMEOUT_MS
    column: str | None = None
    fail_on_late_split: bool = False

    @property
    def cut(self) -> bool:
        """Whether ``eventTime.alignment=cut``."""
        return self.alignment is Alignment.CUT

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> EventTimeOptions:
        """Validate the ``eventTime.*`` options in ``options`` (other names are ignored)."""
        lowered = {k.lower(): v for k, v in options.items() if v is not None}
        raw = lowered.get(ALIGNMENT.lower())
        alignment = Alignment.OFF
        if raw is not None:
            try:
                alignment = Alignment(raw.strip().lower())
            except ValueError:
                raise InvalidOptionError(ALIGNMENT, raw, "off or cut") from None
        max_drift = _duration(lowered, MAX_DRIFT)
        idle = _duration(lowered, IDLE_TIMEOUT)
        if idle is not None and idle < 1:
            raise InvalidOptionError(
                IDLE_TIMEOUT, lowered[IDLE_TIMEOUT.lower()], "a duration of at least 1 ms"
            )
        column = lowered.get(COLUMN.lower())
        if column is not None and not column.strip():
            raise InvalidOptionError(COLUMN, column, "a column name")
        fail_raw = lowered.get(FAIL_ON_LATE_SPLIT.lower(), "false").strip().lower()
        if fail_raw not in ("true", "false"):
            raise InvalidOptionError(FAIL_ON_LATE_SPLIT, fail_raw, "true or false")
        return cls(
            alignment=alignment,
            max_drift_ms=DEFAULT_MAX_DRIFT_MS if max_drift is None else max_drift,
            idle_timeout_ms=DEFAULT_IDLE_TIMEOUT_MS if idle is None else idle,
            column=None if column is None else column.strip(),
            fail_on_late_split=fail_raw == "true",
        )


def _duration(lowered: Mapping[str, str], name: str) -> int | None:
    try:
        return parse_duration_ms(lowered, name.lower())
    except InvalidOptionError as e:  # named as documented, not lower-cased
        raise InvalidOptionError(name, lowered[name.lower()], e.expected) from None
