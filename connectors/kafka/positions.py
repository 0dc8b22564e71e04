"""Starting and stopping offset strategies, resolved to concrete offsets on the driver.

One class per strategy with factory methods on ``OffsetsInitializer`` (as Flink's Kafka source):
``earliest()``, ``latest()``, ``specific(offsets)``, ``timestamp(ms)``, ``timestamps(per partition)``
and ``committed(fallback)``. ``resolve`` turns a list of topic partitions into offsets with one
batched call per kind of lookup through an ``OffsetLookup`` (the planner's admin client, or a fake
in unit tests).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from connector_base import ConnectorError

__all__ = [
    "EARLIEST",
    "LATEST",
    "OffsetLookup",
    "OffsetsInitializer",
    "TimestampStrategy",
    "TopicPartition",
]

EARLIEST = -2
"""In JSON offsets: the earliest available offset (as Spark)."""
LATEST = -1
"""In JSON offsets: the latest offset (as Spark)."""

TopicPartition = tuple[str, int]
"""``(topic, partition)``."""


class OffsetLookup(Protocol):
    """Batched offset lookups against the cluster (all on the driver)."""

    def earliest(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        """The earliest available offset of each partition."""

    def latest(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        """The latest offset (end) of each partition (the last stable offset under read_committed)."""

    def for_times(self, timestamps: Mapping[TopicPartition, int]) -> dict[TopicPartition, int | None]:
        """The first offset whose timestamp is >= the given one; ``None`` where there is none."""

    def committed(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int | None]:
        """The consumer group's committed offsets; ``None`` where the group has none."""


class TimestampStrategy(Enum):
    """``startingOffsetsByTimestampStrategy``: what to do when no offset matches a timestamp."""

    ERROR = "error"
    LATEST = "latest"


class OffsetsInitializer(ABC):
    """Turns topic partitions into concrete offsets."""

    @abstractmethod
    def resolve(
        self, partitions: Sequence[TopicPartition], lookup: OffsetLookup
    ) -> dict[TopicPartition, int]:
        """Concrete offsets for ``partitions``."""

    @abstractmethod
    def describe(self) -> str:
        """A short description for logs and errors."""

    json_option_suffix = "Offsets"
    """The option a JSON map of this kind comes from: ``starting`` / ``ending`` + this suffix."""

    def named_partitions(self) -> frozenset[TopicPartition]:
        """The partitions a JSON map of the option names (none for keywords and global timestamps)."""
        return frozenset()

    @staticmethod
    def earliest() -> OffsetsInitializer:
        """Every partition from its earliest available offset."""
        return _Specific({}, EARLIEST)

    @staticmethod
    def latest() -> OffsetsInitializer:
        """Every partition from its latest offset."""
        return _Specific({}, LATEST)

    @staticmethod
    def specific(offsets: Mapping[TopicPartition, int], default: int) -> OffsetsInitializer:
        """Given offsets (``-2`` earliest, ``-1`` latest); ``default`` for partitions not listed."""
        return _Specific(dict(offsets), default)

    @staticmethod
    def timestamp(ms: int, strategy: TimestampStrategy, role: str) -> OffsetsInitializer:
        """Every partition from the first record at or after ``ms``."""
        return _Timestamps(ms, {}, strategy, role)

    @staticmethod
    def timestamps(
        per_partition: Mapping[TopicPartition, int], strategy: TimestampStrategy, role: str
    ) -> OffsetsInitializer:
        """Each listed partition from the first record at or after its timestamp."""
        return _Timestamps(None, dict(per_partition), strategy, role)

    @staticmethod
    def committed(fallback: int | None) -> OffsetsInitializer:
        """The group's committed offsets; ``fallback`` (EARLIEST/LATEST) where none, or fail if ``None``."""
        return _Committed(fallback)


def _by_symbol(wanted: Mapping[TopicPartition, int], lookup: OffsetLookup) -> dict[TopicPartition, int]:
    """Resolve -2/-1 with one batched lookup each; concrete offsets pass through."""
    out = {tp: o for tp, o in wanted.items() if o >= 0}
    earliest = [tp for tp, o in wanted.items() if o == EARLIEST]
    latest = [tp for tp, o in wanted.items() if o == LATEST]
    if earliest:
        out.update(lookup.earliest(earliest))
    if latest:
        out.update(lookup.latest(latest))
    return out


@dataclass(frozen=True)
class _Specific(OffsetsInitializer):
    offsets: dict[TopicPartition, int]
    default: int

    def resolve(
        self, partitions: Sequence[TopicPartition], lookup: OffsetLookup
    ) -> dict[TopicPartition, int]:
        return _by_symbol({tp: self.offsets.get(tp, self.default) for tp in partitions}, lookup)

    def named_partitions(self) -> frozenset[TopicPartition]:
        return frozenset(self.offsets)

    def describe(self) -> str:
        if not self.offsets:
            return "earliest" if self.default == EARLIEST else "latest"
        return f"offsets {sorted(self.offsets.items())}"


@dataclass(frozen=True)
class _Timestamps(OffsetsInitializer):
    json_option_suffix = "OffsetsByTimestamp"
    global_ms: int | None
    per_partition: dict[TopicPartition, int] = field(default_factory=dict)
    strategy: TimestampStrategy = TimestampStrategy.ERROR
    role: str = "starting"

    def resolve(
        self, partitions: Sequence[TopicPartition], lookup: OffsetLookup
    ) -> dict[TopicPartition, int]:
        if self.global_ms is not None:
            wanted = {tp: self.global_ms for tp in partitions}
        else:
            wanted = {tp: self.per_partition[tp] for tp in partitions if tp in self.per_partition}
        found = lookup.for_times(wanted) if wanted else {}
        out: dict[TopicPartition, int] = {}
        missing = []
        for tp in partitions:
            if tp not in wanted:
                missing.append(tp)  # a partition the per-partition map does not name
                continue
            offset = found.get(tp)
            if offset is None or offset < 0:
                if self.role == "starting" and self.strategy is TimestampStrategy.ERROR:
                    raise ConnectorError(
                        f"no offset of {tp[0]}-{tp[1]} has a timestamp at or after {wanted[tp]} "
                        "(set startingOffsetsByTimestampStrategy=latest to start at the latest offset "
                        "instead)"
                    )
                missing.append(tp)
            else:
                out[tp] = offset
        if missing:
            # ending: no later record means read to the latest offset (as Spark); starting: strategy=latest
            unnamed = [tp for tp in missing if tp not in wanted]
            if unnamed and self.role == "starting":
                out.update(lookup.earliest(unnamed))  # new/unnamed partitions start at earliest
                missing = [tp for tp in missing if tp in wanted]
            if missing:
                out.update(lookup.latest(missing))
        return out

    def named_partitions(self) -> frozenset[TopicPartition]:
        return frozenset(self.per_partition)

    def describe(self) -> str:
        what = self.global_ms if self.global_ms is not None else sorted(self.per_partition.items())
        return f"{self.role} timestamp {what} (strategy {self.strategy.value})"


@dataclass(frozen=True)
class _Committed(OffsetsInitializer):
    fallback: int | None

    def resolve(
        self, partitions: Sequence[TopicPartition], lookup: OffsetLookup
    ) -> dict[TopicPartition, int]:
        found = lookup.committed(partitions)
        out = {tp: o for tp, o in found.items() if o is not None and o >= 0}
        missing = [tp for tp in partitions if tp not in out]
        if missing:
            if self.fallback is None:
                names = ", ".join(f"{t}-{p}" for t, p in missing)
                raise ConnectorError(
                    f"the consumer group has no committed offset for {names} and "
                    "committedOffsetsFallback=none"
                )
            out.update(_by_symbol({tp: self.fallback for tp in missing}, lookup))
        return out

    def describe(self) -> str:
        fb = {None: "none", EARLIEST: "earliest", LATEST: "latest"}[self.fallback]
        return f"committed group offsets (fallback {fb})"
