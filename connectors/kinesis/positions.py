"""Shard positions and starting-position strategies of ``kinesis-unified``.

A ``ShardPosition`` is a place between two records of one shard, as JSON primitives:

* ``TRIM_HORIZON``: before the oldest record;
* ``AT_TIMESTAMP(ms)``: before the first record, in sequence order, whose
  ``ApproximateArrivalTimestamp >= ms`` (the time cuts of the planner, see docs/kinesis.md);
* ``AFTER_SEQUENCE_NUMBER(seq)``: after the record ``seq`` (reader checkpoints, local runtime);
* ``SHARD_END``: after the last record of a closed shard.

``StartingPosition`` is what the user asks for (``TRIM_HORIZON``, ``LATEST``, ``AT_TIMESTAMP``); it is
resolved on the driver into a ``ShardPosition`` (``LATEST`` becomes ``AT_TIMESTAMP`` of the service's
clock when the query starts).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum

from connector_base import InvalidOptionError
from connector_base.serialization import Json

__all__ = ["PositionKind", "ShardPosition", "StartingPosition", "StartingPositionKind", "parse_timestamp_ms"]


class PositionKind(Enum):
    """The kinds of ``ShardPosition``."""

    TRIM_HORIZON = "TRIM_HORIZON"
    AT_TIMESTAMP = "AT_TIMESTAMP"
    AFTER_SEQUENCE_NUMBER = "AFTER_SEQUENCE_NUMBER"
    SHARD_END = "SHARD_END"


@dataclass(frozen=True, slots=True)
class ShardPosition:
    """A position between two records of a shard (see the module docstring)."""

    kind: PositionKind
    timestamp_ms: int | None = None
    sequence_number: str | None = None

    def __post_init__(self) -> None:
        if (self.kind is PositionKind.AT_TIMESTAMP) != (self.timestamp_ms is not None):
            raise ValueError(f"AT_TIMESTAMP positions (and only they) carry timestamp_ms: {self!r}")
        if (self.kind is PositionKind.AFTER_SEQUENCE_NUMBER) != (self.sequence_number is not None):
            raise ValueError(
                f"AFTER_SEQUENCE_NUMBER positions (and only they) carry sequence_number: {self!r}"
            )

    @classmethod
    def trim_horizon(cls) -> ShardPosition:
        """Before the oldest record."""
        return cls(PositionKind.TRIM_HORIZON)

    @classmethod
    def at_timestamp(cls, ms: int) -> ShardPosition:
        """Before the first record with ``ApproximateArrivalTimestamp >= ms``."""
        return cls(PositionKind.AT_TIMESTAMP, timestamp_ms=int(ms))

    @classmethod
    def after_sequence_number(cls, seq: str) -> ShardPosition:
        """After record ``seq``."""
        return cls(PositionKind.AFTER_SEQUENCE_NUMBER, sequence_number=str(seq))

    @classmethod
    def shard_end(cls) -> ShardPosition:
        """After the last record of a closed shard."""
        return cls(PositionKind.SHARD_END)

    @property
    def is_shard_end(self) -> bool:
        """Whether this is ``SHARD_END``."""
        return self.kind is PositionKind.SHARD_END

    def to_json(self) -> Json:
        """JSON primitives (the offset form)."""
        match self.kind:
            case PositionKind.AT_TIMESTAMP:
                return {"k": self.kind.value, "ms": self.timestamp_ms}
            case PositionKind.AFTER_SEQUENCE_NUMBER:
                return {"k": self.kind.value, "seq": self.sequence_number}
            case _:
                return {"k": self.kind.value}

    @classmethod
    def from_json(cls, data: Json) -> ShardPosition:
        """Read what ``to_json`` wrote."""
        kind = PositionKind(data["k"])
        return cls(
            kind,
            timestamp_ms=int(data["ms"]) if kind is PositionKind.AT_TIMESTAMP else None,
            sequence_number=str(data["seq"]) if kind is PositionKind.AFTER_SEQUENCE_NUMBER else None,
        )

    def __str__(self) -> str:
        if self.kind is PositionKind.AT_TIMESTAMP:
            assert self.timestamp_ms is not None
            iso = datetime.fromtimestamp(self.timestamp_ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
            return f"AT_TIMESTAMP({self.timestamp_ms} = {iso})"
        if self.kind is PositionKind.AFTER_SEQUENCE_NUMBER:
            return f"AFTER_SEQUENCE_NUMBER({self.sequence_number})"
        return self.kind.value


class StartingPositionKind(Enum):
    """The values of option ``startingPosition``."""

    TRIM_HORIZON = "TRIM_HORIZON"
    LATEST = "LATEST"
    AT_TIMESTAMP = "AT_TIMESTAMP"


@dataclass(frozen=True, slots=True)
class StartingPosition:
    """Where the shards that exist when a query starts begin (shards created later start at TRIM_HORIZON)."""

    kind: StartingPositionKind
    timestamp_ms: int | None = None

    @classmethod
    def trim_horizon(cls) -> StartingPosition:
        """The oldest record of every shard."""
        return cls(StartingPositionKind.TRIM_HORIZON)

    @classmethod
    def latest(cls) -> StartingPosition:
        """Records that arrive after the query starts."""
        return cls(StartingPositionKind.LATEST)

    @classmethod
    def timestamp(cls, ms: int) -> StartingPosition:
        """Records with ``ApproximateArrivalTimestamp >= ms``."""
        return cls(StartingPositionKind.AT_TIMESTAMP, int(ms))

    def resolve(self, service_now_ms: int) -> ShardPosition:
        """The concrete position, given the service's clock (driver side only)."""
        match self.kind:
            case StartingPositionKind.TRIM_HORIZON:
                return ShardPosition.trim_horizon()
            case StartingPositionKind.LATEST:
                return ShardPosition.at_timestamp(service_now_ms)
            case _:
                assert self.timestamp_ms is not None
                return ShardPosition.at_timestamp(self.timestamp_ms)


def parse_timestamp_ms(option: str, raw: str) -> int:
    """Epoch milliseconds from an integer, or from ISO-8601 text (naive means UTC)."""
    text = raw.strip()
    if text.lstrip("-").isdigit():
        value = int(text)
        if value < 0:
            raise InvalidOptionError(option, raw, "epoch milliseconds >= 0 or an ISO-8601 timestamp")
        return value
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidOptionError(
            option, raw, "epoch milliseconds or an ISO-8601 timestamp such as 2024-05-01T12:00:00Z"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000)
