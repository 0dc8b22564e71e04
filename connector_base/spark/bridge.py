"""The generic bridge: any ``Source`` plus its ``SplitPlanner`` becomes a PySpark ``DataSource``.

A connector subclasses ``SourceDataSource`` and says how options become a ``Source`` and a
``SplitPlanner``; the bridge does the rest, following DESIGN.md:

* batch (``spark.read``): the driver enumerates splits, resolves start and end positions, and plans
  one Spark partition per range (small ranges are packed together);
* streaming (``spark.readStream``): the enumerator lives in the driver-side stream reader; every
  offset is the FLIP-27 checkpoint (enumerator state + split positions) as versioned JSON, so a
  restarted driver rebuilds from the offset Spark passes back; each micro-batch is ``[start, end)``
  per split; admission control honours ``ReadMaxRows``, ``ReadMaxBytes``, ``ReadMaxFiles`` and the
  source's own limits, and ``Trigger.AvailableNow`` runs several limited batches up to the data
  that existed when the query started;
* executors build a ``SourceReader`` per partition and yield ``pyarrow.RecordBatch``es in bulk.
"""

from __future__ import annotations

import logging
import time
from abc import abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
from pyspark.sql.types import StructType
from typing_extensions import override

from connector_base.errors import ConnectorError, InvalidOptionError
from connector_base.gc_tuning import bulk_gc, freeze_imported_objects_in_reused_worker
from connector_base.serialization import dumps_canonical
from connector_base.source import Source
from connector_base.spark.arrow_output import DEFAULT_BATCH_ROWS
from connector_base.spark.backlog import (
    BacklogSizing,
    backlog_sizing_for,
    default_read_limit,
    take_backlog_options,
)
from connector_base.spark.enumerator_context import DRIVER_SUBTASK, DriverEnumeratorContext
from connector_base.spark.event_time_cut import EventTimeCut
from connector_base.spark.event_time_options import ALIGNMENT, EVENT_TIME_OPTION_NAMES, EventTimeOptions
from connector_base.spark.failed_stream_reader import FailedStreamReader
from connector_base.spark.filters import ColumnFilter, FilterSupport, pushdown_requested, split_by_support
from connector_base.spark.offsets import BridgeOffset, SplitEntry
from connector_base.spark.parallelism import planning_parallelism
from connector_base.spark.partition_reader import read_splits_as_arrow
from connector_base.spark.planner import Position, RangePacking, SplitPlanner
from connector_base.spark.read_limit_options import ReadLimitOptions
from connector_base.spark.read_limits import admit
from connector_base.spark.restore_check import check_restored

__all__ = ["SourceDataSource", "SplitsPartition", "to_arrow_schema"]

LOG = logging.getLogger(__name__)

MAX_REQUEST_ROUNDS = 1_000_000


def to_arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects for ``schema``."""
    from pyspark.sql.pandas.types import to_arrow_schema as _to_arrow

    return _to_arrow(schema, timezone="UTC")  # Spark's Python data source reader expects UTC timestamps


def _as_struct(schema: StructType) -> StructType:
    if not isinstance(schema, StructType):  # DDL strings need a JVM, which workers do not have
        raise TypeError(f"default_schema() must return a StructType, got {type(schema).__name__}")
    return schema


class SplitsPartition(InputPartition):
    """A Spark partition: serialized splits, each bounded to its planned range."""

    def __init__(self, index: int, splits: list[str]) -> None:
        super().__init__(index)
        self.index = index
        self.splits = splits

    def __repr__(self) -> str:
        return f"SplitsPartition({self.index}, {len(self.splits)} splits)"


class SourceDataSource(DataSource):
    """Base class of every connector's PySpark data source.

    Subclasses implement ``name``, ``default_schema``, ``create_source`` and ``create_planner``.
    Options arrive as strings; ``create_source`` parses and validates them, and raises
    ``InvalidOptionError`` naming the option, so bad input fails at ``load()`` / ``start()``.
    """

    fixed_schema: bool = False
    """True when the columns cannot be chosen: a user-specified schema is then refused."""

    @abstractmethod
    def default_schema(self) -> StructType:
        """The schema when the user gives none (a ``StructType``: workers cannot parse DDL)."""

    def fixed_schema_for(self, schema: StructType) -> StructType:
        """The schema ``schema`` must equal when ``fixed_schema``: ``default_schema()`` unless overridden.

        A connector whose columns come from an outside service at ``load()`` (a schema registry)
        derives them again from what ``load()`` recorded in ``schema``, not from the service now.
        """
        return _as_struct(self.default_schema())

    def offset_metadata(self, schema: StructType) -> dict[str, Any] | None:
        """What a streaming query's offsets record besides positions (``None``: nothing).

        Written into every offset (``"metadata"``) and handed back to ``check_offset_metadata`` when a
        restarted query replays or resumes from an offset: e.g. the reader schemas ``load()`` fixed.
        """
        return None

    def check_offset_metadata(self, recorded: Any, schema: StructType) -> None:
        """Raise ``ConnectorError`` if an offset's ``recorded`` metadata does not fit this query."""

    def _check_schema(self, schema: StructType) -> None:
        if not self.fixed_schema:
            return
        fixed = self.fixed_schema_for(schema)
        if schema.simpleString() != fixed.simpleString():
            raise ConnectorError(
                f"format {self.name()!r} has a fixed schema and cannot be read with a user-specified one "
                f"({schema.simpleString()}); drop .schema(...): its columns are {fixed.simpleString()}"
            )

    @abstractmethod
    def create_source(self, schema: StructType, streaming: bool) -> Source[Any, Any, Any]:
        """Parse the options into a ``Source`` for ``schema`` (batch or streaming semantics)."""

    @abstractmethod
    def create_planner(self, source: Source[Any, Any, Any]) -> SplitPlanner[Any]:
        """The driver-side planner for ``source``."""

    def read_limit_options(self) -> ReadLimitOptions:
        """Admission control from the options (none by default)."""
        return ReadLimitOptions()

    def reader_config(self) -> dict[str, Any]:
        """Config for the ``SourceReaderContext`` on executors (queue capacity, fetchers, ...)."""
        return {}

    def filter_support(self, column_filter: ColumnFilter) -> FilterSupport:
        """How far the planner answers ``column_filter`` in batch reads (see filters.py).

        A source that returns anything but ``NONE`` for some filter sets ``supports_filter_pushdown``;
        its planner's ``push_filters`` gets the accepted ones.
        """
        return FilterSupport.NONE

    supports_filter_pushdown: bool = False
    """True when ``filter_support`` accepts some filters (then ``filterPushdown=true`` takes effect)."""

    reads_min_partitions: bool = False
    """True when the connector parses ``minPartitions`` itself (else the bridge takes it: parallelism.py)."""

    def event_time_cut_support(self, options: EventTimeOptions) -> str | None:
        """``None`` when ``eventTime.alignment=cut`` works with ``options``, else what is valid instead.

        A connector whose planner answers ``positions_at_time``, ``times_at`` and ``head_times``
        (itself, or through ``event_time_lookup``) overrides this (and checks where its event time
        comes from, ``eventTime.column``).
        """
        return f"off: format {self.name()!r} has no event-time lookups on the driver for an event-time cut"

    def event_time_options(self) -> EventTimeOptions:
        """The ``eventTime.*`` options, taken out of ``options`` (the connector never sees them)."""
        parsed: EventTimeOptions | None = self.__dict__.get("_event_time")
        if parsed is None:
            names = {n.lower() for n in EVENT_TIME_OPTION_NAMES}
            taken = {k: v for k, v in self.options.items() if k.lower() in names}
            for key in taken:
                del self.options[key]
            parsed = EventTimeOptions.parse(taken)
            reason = self.event_time_cut_support(parsed) if parsed.cut else None
            if reason is not None:
                raise InvalidOptionError(ALIGNMENT, "cut", reason)
            self.__dict__["_event_time"] = parsed
        return parsed

    def batch_rows(self) -> int:
        """Rows per Arrow batch handed to Spark."""
        raw = self.options.get("arrowBatchRows")
        if raw is None:
            return DEFAULT_BATCH_ROWS
        if not raw.isdigit() or int(raw) < 1:
            raise InvalidOptionError("arrowBatchRows", raw, "a positive integer")
        return int(raw)

    # --- DataSource API ---------------------------------------------------------------------
    def schema(self) -> StructType | str:
        """The default schema; options are validated here so ``load()`` fails early.

        Spark calls ``schema()`` for ``read`` and ``readStream`` alike without saying which, so here
        options must be valid for at least one of them (``startingOffsets=latest`` is streaming-only,
        for instance); ``reader()`` and ``streamReader()`` then apply the rules of their mode.
        """
        freeze_imported_objects_in_reused_worker()  # Spark's planning worker collects after the task
        planning_parallelism(self)  # minPartitions is the bridge's unless the connector reads it
        self.event_time_options()
        take_backlog_options(self)  # backlog.* are the bridge's (backlog.py)
        schema = _as_struct(self.default_schema())
        self._validate_either_mode(schema)
        pushdown_requested(self.options)
        return schema

    def _validate_either_mode(self, schema: StructType) -> None:
        try:
            self.create_source(schema, streaming=False)
        except InvalidOptionError as batch_error:
            try:
                self.create_source(schema, streaming=True)
            except InvalidOptionError as stream_error:
                if str(stream_error) == str(batch_error):
                    raise batch_error from None
                raise InvalidOptionError(
                    batch_error.option,
                    batch_error.value,
                    f"{batch_error.expected} (spark.read); for spark.readStream: {stream_error}",
                ) from None

    def reader(self, schema: StructType) -> DataSourceReader:
        """A batch reader (options validated now)."""
        freeze_imported_objects_in_reused_worker()
        planning_parallelism(self)
        self.event_time_options()
        take_backlog_options(self)
        self._check_schema(schema)
        self.create_source(schema, streaming=False)
        self.batch_rows()
        if pushdown_requested(self.options) and self.supports_filter_pushdown:
            return _PushdownBatchReader(self, schema)
        return _BridgeBatchReader(self, schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """A micro-batch stream reader; an error building it is raised by its first call.

        PySpark's runner would otherwise end the error with its own ``UnboundLocalError`` (see
        ``failed_stream_reader``).
        """
        try:
            return self._stream_reader(schema)
        except Exception as error:
            return FailedStreamReader(error)

    def _stream_reader(self, schema: StructType) -> DataSourceStreamReader:
        """A micro-batch stream reader (options validated now)."""
        freeze_imported_objects_in_reused_worker()
        planning_parallelism(self)
        self.event_time_options()
        take_backlog_options(self)
        self._check_schema(schema)
        self.create_source(schema, streaming=True)
        self.read_limit_options()
        backlog_sizing_for(self)
        self.batch_rows()
        return _BridgeStreamReader(self, schema)


def _read_partition(
    ds: SourceDataSource, schema: StructType, streaming: bool, partition: SplitsPartition
) -> Iterator[pa.RecordBatch]:
    source = ds.create_source(schema, streaming=streaming)
    serializer = source.split_serializer
    splits = [serializer.loads(s) for s in partition.splits]
    yield from read_splits_as_arrow(
        source, splits, to_arrow_schema(schema), ds.batch_rows(), ds.reader_config()
    )


class _DriverPlan:
    """The enumerator and split positions of one query on the driver (not pickled to executors)."""

    def __init__(self, source: Source[Any, Any, Any], planner: SplitPlanner[Any]) -> None:
        self.source = source
        self.planner = planner
        self.context: DriverEnumeratorContext[Any] = DriverEnumeratorContext()
        self.enumerator: Any = None
        self.splits: dict[str, SplitEntry[Any]] = {}
        self.checkpoint_id = 0
        planner.open()

    def start_fresh(self) -> None:
        self.enumerator = self.source.create_enumerator(self.context)
        self._start()

    def rewind(self) -> None:
        """Drop the enumerator and the positions (``restore`` follows); the planner stays open."""
        if self.enumerator is not None:
            self.enumerator.close()
        self.context = DriverEnumeratorContext()
        self.enumerator = None
        self.splits = {}

    def restore(self, offset: BridgeOffset[Any]) -> None:
        state = self.source.enumerator_checkpoint_serializer.deserialize(offset.enumerator)
        forget = check_restored(self.planner, state, {sid: e.split for sid, e in offset.splits.items()})
        self.enumerator = self.source.restore_enumerator(self.context, state)
        self.splits = {sid: e for sid, e in offset.splits.items() if sid not in forget}
        if offset.no_more_splits:
            self.context.signal_no_more_splits(DRIVER_SUBTASK)
        self._start()

    def _start(self) -> None:
        self.enumerator.start()
        self.enumerator.add_reader(DRIVER_SUBTASK)

    def discover(self, force: bool = False) -> None:
        """Run due discovery and pull every split the enumerator will hand out now."""
        self.context.run_due(force=force)
        self._take()
        for _ in range(MAX_REQUEST_ROUNDS):
            self.enumerator.handle_split_request(DRIVER_SUBTASK, "spark-driver")
            if not self._take():
                break

    def _take(self) -> bool:
        new = self.context.take_assigned()
        for split in new:
            if split.split_id in self.splits:
                continue
            first = self.planner.start_position(split)
            self.splits[split.split_id] = SplitEntry(split, first, first)
        return bool(new)

    def offset(self, positions: Mapping[str, Position] | None = None) -> BridgeOffset[Any]:
        self.checkpoint_id += 1
        state = self.enumerator.snapshot_state(self.checkpoint_id)
        enumerator_json = self.source.enumerator_checkpoint_serializer.serialize(state)
        entries = {
            sid: SplitEntry(e.split, e.first, positions.get(sid, e.pos) if positions else e.pos)
            for sid, e in self.splits.items()
        }
        return BridgeOffset(enumerator_json, entries, self.context.no_more_splits)

    def close(self) -> None:
        try:
            if self.enumerator is not None:
                self.enumerator.close()
        finally:
            self.planner.close()


def _pack(
    planner: SplitPlanner[Any],
    source: Source[Any, Any, Any],
    ranges: list[tuple[Any, Any, Any]],
    parallelism: int,
) -> list[SplitsPartition]:
    """Turn ``(split, start, end)`` ranges into partitions of serialized range splits.

    Ranges whose planner gives no ``packing`` get a partition per piece. Ranges packed alike share
    partitions of about ``min(target, max(open_cost, total / parallelism))`` (``planning_parallelism``;
    as Spark's file sources split by ``min(maxPartitionBytes, max(openCost, total / minPartitionNum))``),
    in plan order, so such a plan has no fewer partitions than ``parallelism`` when it has that many
    pieces. A range's weight is spread evenly over the pieces ``range_splits`` cuts it into, and two
    pieces of one range never share a partition: the planner cut it to be read in parallel.
    """
    serializer = source.split_serializer
    alone: list[list[str]] = []
    groups: dict[RangePacking, list[tuple[int, str, int]]] = {}
    for index, (split, start, end) in enumerate(ranges):
        pieces = [serializer.dumps(rs) for rs in planner.range_splits(split, start, end)]
        if not pieces:
            continue
        packing = planner.packing(split)
        if packing is None:
            alone.extend([p] for p in pieces)
            continue
        each = packing.weight(planner.backlog(split, start, end), len(pieces))
        groups.setdefault(packing, []).extend((index, p, each) for p in pieces)
    packed: list[list[str]] = []
    for packing, weighed in groups.items():
        total = sum(w for _i, _p, w in weighed)
        target = min(packing.target, max(packing.open_cost, total // parallelism))
        current: list[str] = []
        origins: set[int] = set()
        size = 0
        for origin, piece, w in weighed:
            if current and (size + w > target or origin in origins):
                packed.append(current)
                current, origins, size = [], set(), 0
            current.append(piece)
            origins.add(origin)
            size += w
        if current:
            packed.append(current)
    return [SplitsPartition(i, p) for i, p in enumerate(alone + packed)]


class _BridgeBatchReader(DataSourceReader):
    """``spark.read``: plan every split from its start to its end as of now."""

    def __init__(self, ds: SourceDataSource, schema: StructType) -> None:
        self._ds = ds
        self._schema = schema
        self._pushed: list[ColumnFilter] = []

    @override
    def partitions(self) -> Sequence[InputPartition]:
        source = self._ds.create_source(self._schema, streaming=False)
        planner = self._ds.create_planner(source)
        if self._pushed:
            planner.push_filters(self._pushed)
        plan = _DriverPlan(source, planner)
        try:
            plan.start_fresh()
            plan.discover(force=True)
            current = {sid: (e.split, e.first) for sid, e in plan.splits.items()}
            ends = plan.planner.end_positions(current) if current else {}
            ranges = [
                (e.split, e.first, ends[sid])
                for sid, e in plan.splits.items()
                if ends.get(sid, e.first) != e.first
            ]
            parts = _pack(plan.planner, source, ranges, planning_parallelism(self._ds))
            LOG.info(
                "batch plan: %d splits, %d non-empty ranges, %d partitions",
                len(plan.splits),
                len(ranges),
                len(parts),
            )
            return parts
        finally:
            plan.close()

    @override
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SplitsPartition):  # Spark reads one empty partition of an empty plan
            return
        yield from _read_partition(self._ds, self._schema, False, partition)


class _PushdownBatchReader(_BridgeBatchReader):
    """``spark.read`` with ``filterPushdown=true``: Spark offers the query's filters first.

    Returned only on request: Spark refuses to plan a reader that overrides ``pushFilters`` while
    ``spark.sql.python.filterPushdown.enabled`` is false, and the planning worker cannot see it.
    """

    @override
    def pushFilters(self, filters: list[Any]) -> Iterable[Any]:
        self._pushed, returned = split_by_support(filters, self._ds.filter_support)
        LOG.info("pushed filters: %s; %d returned to Spark", self._pushed, len(returned))
        return returned


class _BridgeStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream``: the enumerator on the driver, offsets as FLIP-27 checkpoints.

    Threading: Spark calls every method but ``read`` from one driver-side thread; ``read`` runs on
    executors on an unpickled copy that carries only the data source and the schema.
    """

    def __init__(self, ds: SourceDataSource, schema: StructType) -> None:
        self._ds = ds
        self._schema = schema
        self._plan: _DriverPlan | None = None
        self._last: str | None = None
        self._initial: dict[str, Any] | None = None
        self._latest_report: dict[str, Any] | None = None
        self._available_now = False
        self._target: dict[str, Position] | None = None
        self._last_progress: float | None = None
        event_time = ds.event_time_options()
        self._cut = EventTimeCut(event_time) if event_time.cut else None
        self._sizing: BacklogSizing | None = None
        self._metadata: dict[str, Any] | None = None
        self._checked: set[str] = set()

    def __getstate__(self) -> dict[str, Any]:
        return {"_ds": self._ds, "_schema": self._schema}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["_ds"], state["_schema"])  # type: ignore[misc]

    # --- driver state -------------------------------------------------------------------------
    def _new_plan(self) -> _DriverPlan:
        if self._plan is not None:
            self._plan.close()
        source = self._ds.create_source(self._schema, streaming=True)
        self._plan = _DriverPlan(source, self._ds.create_planner(source))
        return self._plan

    def _plan_for(self, start: Mapping[str, Any]) -> _DriverPlan:
        if self._plan is not None and self._last == dumps_canonical(start):
            return self._plan
        self._check_restored(start)
        if self._plan is not None:
            # Spark asks from another offset than the one last returned: the enumerator is restored
            # from it, but the open planner (its clients, already past first contact) is kept, so a
            # rewind during a broker outage waits on it as any other call rather than failing load()'s
            # reachability check
            plan = self._plan
            plan.rewind()
        else:
            plan = self._new_plan()
        plan.restore(BridgeOffset.from_json(start, plan.source.split_serializer))
        LOG.info("rebuilt the driver plan from offset with %d splits", len(plan.splits))
        return plan

    def _remember(self, offset: dict[str, Any]) -> dict[str, Any]:
        if "metadata" not in offset:  # this query's own offsets; a restored one keeps what it recorded
            if self._metadata is None:
                self._metadata = self._ds.offset_metadata(self._schema) or {}
            if self._metadata:
                offset = {**offset, "metadata": self._metadata}
        self._last = dumps_canonical(offset)
        return offset

    def _check_restored(self, offset: Mapping[str, Any]) -> None:
        """The source's check of an offset's metadata (once per distinct value)."""
        recorded = offset.get("metadata") if isinstance(offset, Mapping) else None
        if recorded is None:
            return  # written by a release without metadata, or a source without any
        key = dumps_canonical(recorded)
        if key not in self._checked:
            self._ds.check_offset_metadata(recorded, self._schema)
            self._checked.add(key)

    # --- Spark API ----------------------------------------------------------------------------
    @override
    def initialOffset(self) -> dict[str, Any]:
        if self._initial is None:
            plan = self._new_plan()
            plan.start_fresh()
            plan.discover(force=True)
            self._initial = plan.offset().to_json(plan.source.split_serializer)
        return self._remember(self._initial)

    @override
    def getDefaultReadLimit(self) -> Any:
        return default_read_limit(self._ds)  # the larger of the normal and backlog.* maxima

    @override
    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now = True

    @bulk_gc  # per-split objects in bulk: see gc_tuning
    @override
    def latestOffset(self, start: dict[str, Any], limit: Any) -> dict[str, Any]:
        plan = self._plan_for(start)
        planner = plan.planner
        serializer = plan.source.split_serializer
        # splits finished at the start offset leave the plan
        for sid, e in list(plan.splits.items()):
            if planner.is_finished(e.split, e.pos):
                del plan.splits[sid]
        if self._target is None or planner.discovers_during_available_now():
            plan.discover()
        current = {sid: (e.split, e.pos) for sid, e in plan.splits.items()}
        available = planner.end_positions(current) if current else {}
        if self._available_now and self._target is None:
            self._target = dict(planner.target_positions(current) if current else {})
            LOG.info("Trigger.AvailableNow target fixed for %d splits", len(self._target))
        elif self._target is not None and any(sid not in self._target for sid in current):
            # splits discovered after the target was fixed (a hybrid source's next stage): theirs now
            new = {sid: c for sid, c in current.items() if sid not in self._target}
            self._target.update(planner.target_positions(new))
        if self._target is not None:
            # a split the planner holds now (its end is its position) stays held until released
            available = {
                sid: pos if available.get(sid, pos) == pos else self._target.get(sid, pos)
                for sid, (_s, pos) in current.items()
            }
        self._latest_report = plan.offset(available).to_json(serializer)
        limits = self._ds.read_limit_options().merged_with_spark_limit(limit)
        ranges = {sid: (e.split, e.pos, available.get(sid, e.pos)) for sid, e in plan.splits.items()}
        # backlog (backlog.py): lag figures for reportLatestOffset, bigger limits while catching up
        self._sizing = self._sizing or backlog_sizing_for(self._ds)
        planner.use_read_limits(self._sizing.counting_limits(limits))
        self._sizing.update(planner, ranges, plan.context.processing_backlog)
        limits = self._sizing.limits(limits)
        if (
            limits is not None
            and limits.min_records is not None
            and not self._min_reached(planner, ranges, limits)
        ):
            return self._remember(dict(start))
        if self._cut is not None:  # eventTime.alignment=cut: no split reads past the cut
            ranges = self._cut.bound(planner, start, ranges, limits, final=self._target is not None)
        chosen = admit(planner, ranges, limits)
        before = start.get("splits", {})
        advanced = any(sid not in before for sid in plan.splits) or any(
            pos != plan.splits[sid].pos for sid, pos in chosen.items()
        )
        if not advanced:
            # nothing new to read: keep the start offset (splits finished there leave later) so
            # Spark runs no empty micro-batch
            return self._remember(dict(start))
        for sid, pos in chosen.items():
            plan.splits[sid].pos = pos
        self._last_progress = time.monotonic()
        offset = plan.offset()
        offset.event_time = self._cut.mark(chosen) if self._cut is not None else None
        return self._remember(offset.to_json(serializer))

    def _min_reached(
        self, planner: SplitPlanner[Any], ranges: Mapping[str, tuple[Any, Any, Any]], limits: ReadLimitOptions
    ) -> bool:
        total = sum((planner.backlog(s, a, b).records or 0) for s, a, b in ranges.values())
        assert limits.min_records is not None
        if total >= limits.min_records:
            return True
        if self._last_progress is None:
            # the first trigger is not delayed; the delay counts from it (as Spark's Kafka source,
            # whose last trigger time starts at 0)
            self._last_progress = time.monotonic()
            return True
        delay = limits.max_trigger_delay_ms
        waited_ms = (time.monotonic() - self._last_progress) * 1000
        return delay is not None and waited_ms >= delay and total > 0

    @override
    def reportLatestOffset(self) -> dict[str, Any] | None:
        report = self._sizing.report(self._plan) if self._sizing else self._latest_report
        if self._cut is not None and report is not None:
            report = {**report, "eventTime": self._cut.report()}
        return report

    @bulk_gc
    @override
    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        if self._plan is None:
            self._new_plan()
        assert self._plan is not None
        plan = self._plan
        self._check_restored(end)  # a restarted query replaying a batch of its checkpoint
        serializer = plan.source.split_serializer
        s = BridgeOffset.from_json(start, serializer)
        e = BridgeOffset.from_json(end, serializer)
        ranges = []
        for sid, entry in e.splits.items():
            begin = s.splits[sid].pos if sid in s.splits else entry.first
            if begin != entry.pos:
                ranges.append((entry.split, begin, entry.pos))
        return _pack(plan.planner, plan.source, ranges, planning_parallelism(self._ds))

    @override
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SplitsPartition):
            return
        yield from _read_partition(self._ds, self._schema, True, partition)

    @override
    def commit(self, end: dict[str, Any]) -> None:
        if self._plan is None:
            return
        e = BridgeOffset.from_json(end, self._plan.source.split_serializer)
        self._plan.planner.on_commit({sid: (x.split, x.pos) for sid, x in e.splits.items()})
        if self._plan.enumerator is not None:
            self._plan.enumerator.notify_checkpoint_complete(self._plan.checkpoint_id)

    @override
    def stop(self) -> None:
        if self._plan is not None:
            self._plan.close()
            self._plan = None
