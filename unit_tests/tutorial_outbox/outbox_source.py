"""A source for a SQLite outbox, written by following docs/tutorial-your-own-source.md literally.

The system: a SQLite file with tables ``outbox_*`` of ``(id INTEGER PRIMARY KEY AUTOINCREMENT,
payload TEXT)``. Split = one table; position = the next id to read. Records are
``(table, id, payload)``. SQLite serializes writers, so ids become visible in increasing order and
an end returned by ``end_positions`` never later gains records below it (the position contract);
ids may have gaps (deleted rows), which makes ``end - start`` an upper bound of the records.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql.types import LongType, StringType, StructField, StructType
from typing_extensions import override

from connector_base import (
    BatchEmitter,
    Boundedness,
    FunctionSerializer,
    InvalidOptionError,
    RangeQuerySplitReader,
    ReaderOutput,
    SingleThreadMultiplexSourceReaderBase,
    Source,
    SourceReaderContext,
    SourceSplit,
    SplitEnumerator,
    SplitEnumeratorContext,
    VersionedSerializer,
)
from connector_base.serialization import Json
from connector_base.spark import (
    Backlog,
    Position,
    ReadLimitOptions,
    SourceDataSource,
    SplitPlanner,
    parse_positive_int,
)

Row = tuple[str, int, str]
UNBOUNDED = -1
FETCH_ROWS = 50
DISCOVERY_PERIOD_S = 0.2


def connect(path: str) -> sqlite3.Connection:
    """A connection that sees committed rows (autocommit, so each query reads the latest state)."""
    return sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)


def outbox_tables(conn: sqlite3.Connection, prefix: str) -> list[str]:
    """The tables whose name starts with ``prefix``."""
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
    return [name for (name,) in rows if name.startswith(prefix)]


def next_id(conn: sqlite3.Connection, table: str) -> int:
    """One past the largest id in ``table`` (1 when empty)."""
    (largest,) = conn.execute(f'SELECT COALESCE(MAX(id), 0) FROM "{table}"').fetchone()
    return int(largest) + 1


# --- options -----------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class OutboxOptions:
    """``path`` (the SQLite file), ``tablePrefix``, ``maxRecordsPerTrigger``."""

    path: str
    table_prefix: str = "outbox_"
    max_records_per_trigger: int | None = None

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> OutboxOptions:
        """Parse and validate once; bad input names the option."""
        lowered = {k.lower(): v for k, v in options.items()}
        path = lowered.get("path")
        if not path:
            raise InvalidOptionError("path", path, "the path of an existing SQLite database file")
        try:
            sqlite3.connect(f"file:{path}?mode=ro", uri=True).close()
        except sqlite3.Error:
            raise InvalidOptionError("path", path, "the path of an existing SQLite database file") from None
        limit = parse_positive_int(options, "maxRecordsPerTrigger")
        return cls(path, lowered.get("tableprefix", "outbox_"), limit)


# --- 1. the split --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class OutboxSplit(SourceSplit):
    """Table ``table`` from id ``start``; ``end`` is exclusive or ``UNBOUNDED``."""

    table: str
    start: int
    end: int = UNBOUNDED

    @property
    def split_id(self) -> str:
        """The table name."""
        return self.table


class OutboxSplitState:
    """The next id to read (only inside the reader)."""

    def __init__(self, split: OutboxSplit) -> None:
        self.split = split
        self.next_id = split.start

    def to_split(self) -> OutboxSplit:
        """A split that resumes after the last emitted record."""
        return OutboxSplit(self.split.table, self.next_id, self.split.end)


class OutboxSplitSerializer(VersionedSerializer[OutboxSplit]):
    """Version 1: ``{"t": table, "s": start, "e": end}``."""

    @property
    @override
    def version(self) -> int:
        return 1

    @override
    def to_json(self, value: OutboxSplit) -> Json:
        return {"t": value.table, "s": value.start, "e": value.end}

    @override
    def from_json(self, version: int, data: Json) -> OutboxSplit:
        match version:
            case 1:
                return OutboxSplit(str(data["t"]), int(data["s"]), int(data["e"]))
            case _:
                raise self.unsupported(version)


# --- 2. the SplitReader -------------------------------------------------------------------------------
class OutboxSplitReader(RangeQuerySplitReader[Row, OutboxSplit]):
    """One range query per table and fetch; the base tracks positions and finishes bounded splits."""

    fetch_size = FETCH_ROWS

    def __init__(self, path: str) -> None:
        super().__init__()
        self._conn = connect(path)

    @override
    def query(self, split: OutboxSplit, start: int, end: int | None, limit: int) -> list[Row]:
        rows = self._conn.execute(
            f'SELECT id, payload FROM "{split.table}" WHERE id >= ? AND id < ? ORDER BY id LIMIT ?',
            (start, 2**62 if end is None else end, limit),
        ).fetchall()
        return [(split.table, int(i), str(p)) for i, p in rows]

    @override
    def position_after(self, record: Row) -> int:
        return record[1] + 1

    @override
    def close(self) -> None:
        self._conn.close()


# --- 3. the emitter and the reader --------------------------------------------------------------------
class OutboxRecordEmitter(BatchEmitter[Row, Row, OutboxSplitState]):
    """Rows go out as they are; the state moves past the last one."""

    @override
    def emit_record(self, element: Row, output: ReaderOutput[Row], split_state: OutboxSplitState) -> None:
        output.collect(element)
        split_state.next_id = element[1] + 1

    @override
    def emit_records(
        self, elements: Iterable[Row], output: ReaderOutput[Row], split_state: OutboxSplitState
    ) -> None:
        for element in elements:
            self.emit_record(element, output, split_state)


class OutboxSourceReader(SingleThreadMultiplexSourceReaderBase[Row, Row, OutboxSplit, OutboxSplitState]):
    """How a split becomes a state and back."""

    @override
    def _initialized_state(self, split: OutboxSplit) -> OutboxSplitState:
        return OutboxSplitState(split)

    @override
    def _to_split_type(self, split_id: str, state: OutboxSplitState) -> OutboxSplit:
        return state.to_split()


# --- 4. the enumerator and the Source ----------------------------------------------------------------
class OutboxEnumerator(SplitEnumerator[OutboxSplit, list[str]]):
    """Discovers tables (periodically when unbounded); state = the tables already assigned."""

    def __init__(
        self,
        context: SplitEnumeratorContext[OutboxSplit],
        options: OutboxOptions,
        bounded: bool,
        assigned: Sequence[str] = (),
    ) -> None:
        self._context = context
        self._options = options
        self._bounded = bounded
        self._assigned = set(assigned)
        self._pending: list[OutboxSplit] = []
        self._discovered = False
        self._waiting: set[int] = set()

    @override
    def start(self) -> None:
        period = None if self._bounded else DISCOVERY_PERIOD_S
        self._context.call_async(self._discover, self._on_discovered, period_s=period)

    def _discover(self) -> list[OutboxSplit]:
        """Runs on a worker thread: new tables, each bounded by the ids that exist now if bounded."""
        conn = connect(self._options.path)
        try:
            return [
                OutboxSplit(t, 1, next_id(conn, t) if self._bounded else UNBOUNDED)
                for t in outbox_tables(conn, self._options.table_prefix)
                if t not in self._assigned
            ]
        finally:
            conn.close()

    def _on_discovered(self, splits: list[OutboxSplit] | None, error: BaseException | None) -> None:
        if error is not None:
            raise error
        known = {s.table for s in self._pending} | self._assigned
        self._pending.extend(s for s in splits or [] if s.table not in known)
        self._discovered = True
        self._assign()

    @override
    def add_reader(self, subtask_id: int) -> None:
        self._assign()

    @override
    def handle_split_request(self, subtask_id: int, requester_hostname: str | None = None) -> None:
        self._waiting.add(subtask_id)
        self._assign()

    @override
    def add_splits_back(self, splits: Sequence[OutboxSplit], subtask_id: int) -> None:
        for split in splits:
            self._assigned.discard(split.table)
        self._pending.extend(splits)
        self._assign()

    def _assign(self) -> None:
        readers = sorted(self._context.registered_readers())
        if readers and self._pending:
            assignment: dict[int, list[OutboxSplit]] = {}
            for i, split in enumerate(self._pending):
                assignment.setdefault(readers[i % len(readers)], []).append(split)
                self._assigned.add(split.table)
            self._pending = []
            self._context.assign_splits(assignment)
        if self._bounded and self._discovered and not self._pending:
            for subtask in sorted(self._waiting):
                self._context.signal_no_more_splits(subtask)
            self._waiting.clear()

    @override
    def snapshot_state(self, checkpoint_id: int) -> list[str]:
        return sorted(self._assigned)


ENUMERATOR_STATE_SERIALIZER: FunctionSerializer[list[str]] = FunctionSerializer(
    1, lambda tables: {"assigned": sorted(tables)}, lambda data: [str(t) for t in data["assigned"]]
)
"""Version 1: ``{"assigned": [table, ...]}``."""


class OutboxSource(Source[Row, OutboxSplit, list[str]]):
    """Bounded (ends at the ids that exist at discovery) or continuous."""

    def __init__(self, options: OutboxOptions, bounded: bool) -> None:
        self.options = options
        self.bounded = bounded

    @property
    @override
    def boundedness(self) -> Boundedness:
        return Boundedness.BOUNDED if self.bounded else Boundedness.CONTINUOUS_UNBOUNDED

    @override
    def create_enumerator(self, context: SplitEnumeratorContext[OutboxSplit]) -> OutboxEnumerator:
        return OutboxEnumerator(context, self.options, self.bounded)

    @override
    def restore_enumerator(
        self, context: SplitEnumeratorContext[OutboxSplit], checkpoint: list[str]
    ) -> OutboxEnumerator:
        return OutboxEnumerator(context, self.options, self.bounded, checkpoint)

    @override
    def create_reader(self, context: SourceReaderContext) -> OutboxSourceReader:
        path = self.options.path
        return OutboxSourceReader(lambda: OutboxSplitReader(path), OutboxRecordEmitter(), context)

    @property
    @override
    def split_serializer(self) -> VersionedSerializer[OutboxSplit]:
        return OutboxSplitSerializer()

    @property
    @override
    def enumerator_checkpoint_serializer(self) -> VersionedSerializer[list[str]]:
        return ENUMERATOR_STATE_SERIALIZER


# --- 5. the SplitPlanner -----------------------------------------------------------------------------
class OutboxPlanner(SplitPlanner[OutboxSplit]):
    """Positions are ids; a table's end is one past its largest id now."""

    def __init__(self, options: OutboxOptions) -> None:
        self.options = options
        self._conn: sqlite3.Connection | None = None

    @override
    def open(self) -> None:
        self._conn = connect(self.options.path)

    @override
    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @override
    def start_position(self, split: OutboxSplit) -> Position:
        return split.start

    @override
    def end_positions(self, splits: Mapping[str, tuple[OutboxSplit, Position]]) -> dict[str, Position]:
        assert self._conn is not None, "open() was not called"
        ends: dict[str, Position] = {}
        for sid, (split, pos) in splits.items():
            end = max(int(pos), next_id(self._conn, split.table))
            ends[sid] = end if split.end == UNBOUNDED else min(end, split.end)
        return ends

    @override
    def backlog(self, split: OutboxSplit, start: Position, end: Position) -> Backlog:
        return Backlog(records=int(end) - int(start))  # an upper bound: ids may have gaps

    @override
    def cut(
        self,
        split: OutboxSplit,
        start: Position,
        end: Position,
        max_records: int | None,
        max_bytes: int | None,
    ) -> Position:
        return int(end) if max_records is None else min(int(end), int(start) + max_records)

    @override
    def is_finished(self, split: OutboxSplit, position: Position) -> bool:
        return split.end != UNBOUNDED and int(position) >= split.end

    @override
    def range_splits(self, split: OutboxSplit, start: Position, end: Position) -> list[OutboxSplit]:
        return [OutboxSplit(split.table, int(start), int(end))]


# --- 6. the adapter ----------------------------------------------------------------------------------
SCHEMA = StructType(
    [StructField("table", StringType()), StructField("id", LongType()), StructField("payload", StringType())]
)


class OutboxDataSource(SourceDataSource):
    """``spark.read.format("sqlite-outbox")`` and ``readStream``."""

    @classmethod
    @override
    def name(cls) -> str:
        return "sqlite-outbox"

    @override
    def default_schema(self) -> StructType:
        return SCHEMA

    @override
    def create_source(self, schema: StructType, streaming: bool) -> OutboxSource:
        return OutboxSource(OutboxOptions.parse(self.options), bounded=not streaming)

    @override
    def create_planner(self, source: OutboxSource) -> SplitPlanner[OutboxSplit]:  # type: ignore[override]
        return OutboxPlanner(source.options)

    @override
    def read_limit_options(self) -> ReadLimitOptions:
        return ReadLimitOptions(max_records=OutboxOptions.parse(self.options).max_records_per_trigger)
