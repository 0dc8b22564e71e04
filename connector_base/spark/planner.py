"""``SplitPlanner``: the driver-side part of a source that Spark's micro-batches need.

FLIP-27 readers run until they are told to stop; Spark wants each micro-batch planned on the driver
as ``[start, end)`` per split, so that a retried task or a re-run batch reads exactly the same
records. A connector that runs on Spark implements one ``SplitPlanner`` next to its ``Source``:

* ``start_position`` turns a newly assigned split into a concrete position (``earliest``,
  ``latest``, timestamps, committed offsets are resolved here, on the driver, never on executors);
* ``end_positions`` says how far each split can be read right now (one batched call);
* ``backlog`` and ``cut`` let the bridge apply ``maxRecordsPerTrigger``-style admission control;
* ``range_splits`` turns ``[start, end)`` into splits that executors read exactly;
* ``is_finished`` says a split will never have more data at that position;
* ``positions_at_time``, ``times_at`` and ``head_times`` (optional; or an ``event_time_lookup`` that
  answers them) let the bridge admit records by an event-time cut (``eventTime.alignment=cut``, see
  event_time_cut.py); ``note_split_times``
  hands a planner that dates records by reading them the start offset's event time of each split;
* ``use_read_limits`` tells a planner that counts records by reading them how far to count;
* ``packing`` (optional) lets small ranges share a Spark partition (``RangePacking``).

Positions are opaque JSON primitives to the bridge.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from connector_base.errors import ConnectorError
from connector_base.serialization import Json
from connector_base.split import SourceSplit

if TYPE_CHECKING:
    from connector_base.spark.filters import ColumnFilter
    from connector_base.spark.read_limit_options import ReadLimitOptions

__all__ = ["Backlog", "EventTimeLookup", "Position", "RangePacking", "SplitPlanner"]

SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""
SplitT_contra = TypeVar("SplitT_contra", bound=SourceSplit, contravariant=True)

Position = Json
"""A split position: JSON primitives, opaque to the bridge."""


@dataclass(frozen=True, slots=True)
class Backlog:
    """How much a range holds; ``None`` where the source cannot tell."""

    records: int | None = None
    bytes: int | None = None

    @property
    def is_empty(self) -> bool:
        """Whether the range is known to hold nothing."""
        return self.records == 0 or (self.records is None and self.bytes == 0)


@dataclass(frozen=True, slots=True)
class RangePacking:
    """How a planner's small ranges share Spark partitions (``SplitPlanner.packing``).

    Each range weighs its backlog in ``measure`` (``"bytes"`` or ``"records"``) plus ``open_cost``,
    the fixed cost of a task expressed in the same unit; a partition takes ranges while their weights
    stay within ``target``, and the bridge aims for no fewer partitions than the plan's parallelism
    (as Spark's file sources: ``min(maxPartitionBytes, max(openCost, total / minPartitionNum))``).
    """

    target: int
    open_cost: int
    measure: str = "bytes"

    def __post_init__(self) -> None:
        if self.measure not in ("bytes", "records"):
            raise ValueError(f"RangePacking.measure must be 'bytes' or 'records', not {self.measure!r}")

    def weight(self, backlog: Backlog, pieces: int = 1) -> int:
        """The weight of each of ``pieces`` even pieces of a range: its share of the range's size in
        ``measure`` (0 where unknown) plus the open cost, which every piece pays."""
        size = backlog.bytes if self.measure == "bytes" else backlog.records
        return (size or 0) // pieces + self.open_cost


class EventTimeLookup(Protocol[SplitT_contra]):
    """Answers a planner's event-time lookups (``SplitPlanner.event_time_lookup``); the methods
    mean what ``SplitPlanner``'s methods of the same names mean."""

    def positions_at_time(
        self, ranges: Mapping[str, tuple[SplitT_contra, Position, Position]], t_ms: int
    ) -> dict[str, Position]:
        """As :meth:`SplitPlanner.positions_at_time`."""
        ...

    def times_at(self, positions: Mapping[str, tuple[SplitT_contra, Position]]) -> dict[str, int | None]:
        """As :meth:`SplitPlanner.times_at`."""
        ...

    def head_times(self, ends: Mapping[str, tuple[SplitT_contra, Position]]) -> dict[str, int | None]:
        """As :meth:`SplitPlanner.head_times`."""
        ...


class SplitPlanner(ABC, Generic[SplitT]):
    """Plans micro-batches for one source on the Spark driver.

    Threading: called from the driver's stream-reader thread only; it may hold clients (an admin
    client, a gRPC channel) between calls, created in ``open`` and released in ``close``.
    """

    def open(self) -> None:
        """Create clients (called once before the first call)."""

    def close(self) -> None:
        """Release clients."""

    @abstractmethod
    def start_position(self, split: SplitT) -> Position:
        """The concrete position where a newly assigned split starts."""

    @abstractmethod
    def end_positions(self, splits: Mapping[str, tuple[SplitT, Position]]) -> dict[str, Position]:
        """For each ``split_id -> (split, current position)``: how far it can be read now.

        The answer honours the source's stopping positions (ending offsets, end stream cuts).
        """

    def target_positions(self, splits: Mapping[str, tuple[SplitT, Position]]) -> dict[str, Position]:
        """The positions ``Trigger.AvailableNow`` reads up to: the data that exists now.

        The default is ``end_positions``. A planner that holds some splits back for now (a
        successor until its predecessors are read) returns their unheld ends here; the bridge
        still keeps a split where ``end_positions`` holds it until that hold is released.
        """
        return self.end_positions(splits)

    @abstractmethod
    def backlog(self, split: SplitT, start: Position, end: Position) -> Backlog:
        """How much ``[start, end)`` holds."""

    def cut(
        self, split: SplitT, start: Position, end: Position, max_records: int | None, max_bytes: int | None
    ) -> Position:
        """A position in ``[start, end]`` that admits at most ``max_records`` / ``max_bytes``.

        The default cannot cut inside a split: it admits the whole range or nothing.
        """
        backlog = self.backlog(split, start, end)
        if max_records is not None and backlog.records is not None and backlog.records > max_records:
            return start
        if max_bytes is not None and backlog.bytes is not None and backlog.bytes > max_bytes:
            return start
        return end

    def smallest_cut(self, split: SplitT, start: Position, end: Position) -> Position:
        """The end of the smallest piece of ``[start, end)`` this planner can admit on its own.

        One record, one line, one row group: what a split gets in a micro-batch whose byte share
        was too small for any of it, so a small split is never starved while large ones drain (as
        Spark rounds a record share below one up to one). ``start`` (the default) when the range
        cannot be cut: it waits until its share holds all of it.
        """
        return start

    @abstractmethod
    def is_finished(self, split: SplitT, position: Position) -> bool:
        """Whether the split has nothing more to read at ``position``, ever."""

    @abstractmethod
    def range_splits(self, split: SplitT, start: Position, end: Position) -> list[SplitT]:
        """Splits that executors read to get exactly ``[start, end)`` (several for parallelism)."""

    def on_commit(self, positions: Mapping[str, tuple[SplitT, Position]]) -> None:
        """Spark committed a micro-batch that ended at ``positions`` (for example commit a group)."""

    def admission_key(self, split: SplitT) -> Any:
        """Orders the splits a whole-split limit (``maxFilesPerTrigger``) admits, smallest first. The
        default keeps the order they are known in (discovery, or their ids after a restart)."""
        return ()

    def push_filters(self, filters: Sequence[ColumnFilter]) -> None:
        """Batch reads only: the filters the data source's ``filter_support`` accepted, given
        before ``start_position`` / ``end_positions``, to plan narrower ranges (see filters.py)."""

    # --- event time (optional: a planner without these cannot run eventTime.alignment=cut) --------
    def event_time_lookup(self) -> EventTimeLookup[SplitT] | None:
        """The object that answers the three lookups below, or ``None`` (the default: none).

        A planner that keeps its event-time logic in a lookup of its own returns it here (or raises
        a ``ConnectorError`` saying which option enables it); one that answers them itself
        overrides the three methods instead.
        """
        return None

    def positions_at_time(
        self, ranges: Mapping[str, tuple[SplitT, Position, Position]], t_ms: int
    ) -> dict[str, Position]:
        """For each ``split_id -> (split, start, end)``: the first position in ``[start, end]``
        whose record has event time ``>= t_ms`` (``end`` when none has), in one batched call."""
        return self._lookup("positions by event time").positions_at_time(ranges, t_ms)

    def times_at(self, positions: Mapping[str, tuple[SplitT, Position]]) -> dict[str, int | None]:
        """For each ``split_id -> (split, position)``: the event time (ms) of the record at
        ``position``, ``None`` where there is none yet."""
        return self._lookup("event times").times_at(positions)

    def head_times(self, ends: Mapping[str, tuple[SplitT, Position]]) -> dict[str, int | None]:
        """For each ``split_id -> (split, end)``: the event time (ms) of the newest record before
        ``end`` (the split's head), ``None`` where the split holds no record."""
        return self._lookup("event times").head_times(ends)

    def _lookup(self, what: str) -> EventTimeLookup[SplitT]:
        lookup = self.event_time_lookup()
        if lookup is None:
            raise ConnectorError(f"{type(self).__name__} cannot look up {what}")
        return lookup

    def note_split_times(self, times: Mapping[str, tuple[SplitT, Position, int]]) -> None:
        """For each ``split_id -> (split, position, t_ms)`` of the start offset: every record before
        ``position`` has an event time ``< t_ms``. Called before the batch's event-time lookups.

        A planner whose ``head_times`` come from the system (a broker's newest timestamp, file
        statistics, the service's clock) ignores it, as the default does. One whose heads come from
        records it has read itself uses it for what it has not read: after a driver restart, a
        split already read to its end would otherwise have no head and not hold the cut back.
        """

    def use_read_limits(self, limits: ReadLimitOptions | None) -> None:
        """The limits this trigger may plan with, given before its first ``backlog`` call: Spark's
        limit merged with the source's maxima, raised to the ``backlog.*`` ones (backlog.py) that a
        catching-up batch takes and the backlog decision counts up to; ``None``: all available.

        A planner whose ``backlog`` counts records by reading them, capped, counts up to these (and
        sizes any event-time scan by them) instead of the source's own maxima; the default ignores
        them (counts from positions need no cap).
        """

    def discovers_during_available_now(self) -> bool:
        """Whether ``Trigger.AvailableNow`` keeps discovering splits after it fixed its target.

        ``False`` by default: the target is the data that exists when the query starts. A hybrid
        source's next stage has splits only once the previous stage is read; its planner says
        ``True``, and each split found later gets its target when it first appears.
        """
        return False

    def packing(self, split: SplitT) -> RangePacking | None:
        """How ``split``'s small ranges share Spark partitions with others packed alike (``None``, the
        default: one partition per range). Ranges of different packings never share one."""
        return None
