"""Options of ``sequence-unified``, parsed once into a frozen object."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from connector_base import InvalidOptionError
from connector_base.spark import ReadLimitOptions, parse_positive_int


def _int(options: Mapping[str, str], key: str, default: int, minimum: int) -> int:
    raw = options.get(key.lower())
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidOptionError(key, raw, f"an integer >= {minimum}") from None
    if value < minimum:
        raise InvalidOptionError(key, raw, f"an integer >= {minimum}")
    return value


@dataclass(frozen=True, slots=True)
class SequenceOptions:
    """``partitions``, ``rowsPerPartition`` (bounded) or ``rowsPerSecond`` (continuous)."""

    partitions: int = 2
    rows_per_partition: int = 1000
    continuous: bool = False
    rows_per_second: int = 1000
    start_epoch_s: float = 0.0
    max_records_per_trigger: int | None = None

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> SequenceOptions:
        """Parse and validate; raises ``InvalidOptionError`` naming the option."""
        known = {
            "partitions",
            "rowsperpartition",
            "continuous",
            "rowspersecond",
            "maxrecordspertrigger",
            "path",
            "arrowbatchrows",
            "_start_epoch_s",
        }
        for key in options:
            if key.lower() not in known:
                raise InvalidOptionError(key, options[key], f"one of the options {sorted(known)}")
        lowered = {k.lower(): v for k, v in options.items()}
        continuous_raw = lowered.get("continuous", "false").strip().lower()
        if continuous_raw not in ("true", "false"):
            raise InvalidOptionError("continuous", lowered.get("continuous"), "true or false")
        return cls(
            partitions=_int(lowered, "partitions", 2, 1),
            rows_per_partition=_int(lowered, "rowsPerPartition", 1000, 0),
            continuous=continuous_raw == "true",
            rows_per_second=_int(lowered, "rowsPerSecond", 1000, 1),
            max_records_per_trigger=parse_positive_int(options, "maxRecordsPerTrigger"),
        )

    def read_limits(self) -> ReadLimitOptions:
        """Admission control."""
        return ReadLimitOptions(max_records=self.max_records_per_trigger)
