"""``FileSource`` (the FLIP-27 factory) and ``FilePlanner`` (its Spark micro-batch planner)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
from typing_extensions import override

from connector_base import (
    Boundedness,
    ConnectorError,
    SingleThreadMultiplexSourceReaderBase,
    Source,
    SourceReaderContext,
    SplitEnumeratorContext,
    VersionedSerializer,
)
from connector_base.spark import Backlog, Position, RangePacking, SplitPlanner
from connector_base.spark.filters import ColumnFilter
from connectors.files.compression import codec_of
from connectors.files.enumerator import (
    FileEnumeratorState,
    FileEnumeratorStateSerializer,
    FileRetention,
    FileSplitEnumerator,
)
from connectors.files.event_time import ParquetEventTimes
from connectors.files.filter_pushdown import FileFilters
from connectors.files.formats import ReadSchema
from connectors.files.formats.parquet import row_group_count
from connectors.files.listing import FileStatus
from connectors.files.options import OPEN_COST_BYTES, FileFormat, FileSourceOptions
from connectors.files.record_emitter import FileRecordEmitter
from connectors.files.restore_check import check_files_restore
from connectors.files.source_cleaner import SourceCleaner
from connectors.files.split import FileSourceSplit, FileSourceSplitSerializer, FileSourceSplitState, SplitKind
from connectors.files.split_reader import CHUNK_BYTES, CHUNK_BYTES_CONFIG, FileChunk, FileSplitReader

LOG = logging.getLogger(__name__)


def whole_file_split(
    status: FileStatus,
    fmt: FileFormat,
    continuous: bool = False,
    whole: bool = False,
    ignore_corrupt: bool = False,
    defer_corrupt: bool = False,
) -> FileSourceSplit:
    """The split of a whole discovered file (Parquet: reads the footer for the row-group count).

    ``whole``: the file is read in one piece even when uncompressed (``multiLine`` JSON documents);
    ``ignore_corrupt``: a Parquet file without a readable footer has no row groups;
    ``defer_corrupt`` (``modifiedBefore`` / ``modifiedAfter``, decided in the task): it gets one row
    group, so that the task skips it, or fails reading it, as Spark's read does.

    An empty Parquet file has no rows (Spark's Parquet source skips it) for a bounded source; a
    continuous one tries it again at the next discovery, as any file without a footer yet.
    """
    if fmt is FileFormat.PARQUET:
        try:
            groups = 0 if status.size == 0 and not continuous else row_group_count(status.path)
        except (pa.ArrowException, OSError) as e:
            if isinstance(e, FileNotFoundError) or not (ignore_corrupt or defer_corrupt):
                raise
            groups = 0 if ignore_corrupt else 1  # deferred: the task skips the file or fails reading it
        return FileSourceSplit(status.path, 0, groups, status.size, status.mtime_ms, SplitKind.ROW_GROUPS)
    kind = SplitKind.GZIP if whole or codec_of(status.path) else SplitKind.LINES
    return FileSourceSplit(status.path, 0, status.size, status.size, status.mtime_ms, kind)


class FileSourceReader(
    SingleThreadMultiplexSourceReaderBase[FileChunk, Any, FileSourceSplit, FileSourceSplitState]
):
    """The reader: one fetcher thread (by default) reads the splits in order."""

    def _initialized_state(self, split: FileSourceSplit) -> FileSourceSplitState:
        return FileSourceSplitState.from_split(split)

    def _to_split_type(self, split_id: str, state: FileSourceSplitState) -> FileSourceSplit:
        return state.to_split()


class FileSource(Source[Any, FileSourceSplit, FileEnumeratorState]):
    """Files under a path in one format; bounded, or continuous with periodic discovery."""

    def __init__(self, options: FileSourceOptions, schema: ReadSchema) -> None:
        self.options = options
        self.schema = schema

    @property
    @override
    def boundedness(self) -> Boundedness:
        return Boundedness.CONTINUOUS_UNBOUNDED if self.options.continuous else Boundedness.BOUNDED

    def _enumerator(
        self, context: SplitEnumeratorContext[FileSourceSplit], state: FileEnumeratorState | None
    ) -> FileSplitEnumerator:
        fmt, continuous, whole = self.options.format, self.options.continuous, self.options.whole_files
        ignore, defer = self.options.ignore_corrupt_files, self.options.modified.active
        return FileSplitEnumerator(
            context,
            self.options.path,
            self.options.lists_recursively,
            lambda status: whole_file_split(status, fmt, continuous, whole, ignore, defer),
            self.options.continuous,
            self.options.discovery_interval_ms / 1000.0,
            state,
            retention=FileRetention(self.options.file_age_limit_ms, self.options.latest_first),
            names=self.options.name_filter(),
        )

    @override
    def create_enumerator(self, context: SplitEnumeratorContext[FileSourceSplit]) -> FileSplitEnumerator:
        return self._enumerator(context, None)

    @override
    def restore_enumerator(
        self, context: SplitEnumeratorContext[FileSourceSplit], checkpoint: FileEnumeratorState
    ) -> FileSplitEnumerator:
        return self._enumerator(context, checkpoint)

    @override
    def create_reader(self, context: SourceReaderContext) -> FileSourceReader:
        options, schema = self.options, self.schema
        chunk = int(context.config.get(CHUNK_BYTES_CONFIG, CHUNK_BYTES))
        return FileSourceReader(lambda: FileSplitReader(options, schema, chunk), FileRecordEmitter(), context)

    @property
    @override
    def split_serializer(self) -> VersionedSerializer[FileSourceSplit]:
        return FileSourceSplitSerializer()

    @property
    @override
    def enumerator_checkpoint_serializer(self) -> VersionedSerializer[FileEnumeratorState]:
        return FileEnumeratorStateSerializer()

    @override
    def describe(self) -> dict[str, Any]:
        return {
            "source": "files-unified",
            "path": self.options.path,
            "format": self.options.format.value,
            "continuous": self.options.continuous,
        }


class FilePlanner(SplitPlanner[FileSourceSplit]):
    """Positions are byte offsets (row formats: lines starting at or after it), or row-group indexes.

    A file's end is fixed at discovery (its size then), so a re-run micro-batch reads the same bytes.
    """

    def __init__(
        self,
        options: FileSourceOptions,
        schema: ReadSchema | None = None,
        event_time_column: str | None = None,
    ) -> None:
        self.options = options
        self.schema = schema
        self._times = ParquetEventTimes(event_time_column) if event_time_column else None
        self._filters: FileFilters | None = None
        self._cleaner = SourceCleaner(options.clean_source, options.source_archive_dir)

    def check_restored(
        self, enumerator_state: FileEnumeratorState, splits: Mapping[str, FileSourceSplit]
    ) -> set[str]:
        """A restored offset must hold only files under the path the options name (see restore_check)."""
        recorded = [*enumerator_state.processed, *(s.path for s in enumerator_state.pending)]
        return check_files_restore(self.options.path, [*recorded, *(s.path for s in splits.values())])

    @override
    def start_position(self, split: FileSourceSplit) -> Position:
        return split.start_position

    @override
    def admission_key(self, split: FileSourceSplit) -> tuple[int, str]:
        """``maxFilesPerTrigger``: the oldest files first (``latestFirst``: the newest), as Spark's
        file source sorts them; by path between files of the same time."""
        return (-split.mtime_ms if self.options.latest_first else split.mtime_ms, split.path)

    @override
    def on_commit(self, positions: Mapping[str, tuple[FileSourceSplit, Position]]) -> None:
        """``cleanSource``: archive or delete the files the committed batch finished."""
        if self._cleaner.active:
            self._cleaner.clean(s.path for s, pos in positions.values() if self.is_finished(s, pos))

    @override
    def push_filters(self, filters: Sequence[ColumnFilter]) -> None:
        """Batch reads: drop files by partition values and Parquet row groups by statistics."""
        if self.schema is not None:
            self._filters = FileFilters(filters, self.schema)

    @override
    def end_positions(self, splits: Mapping[str, tuple[FileSourceSplit, Position]]) -> dict[str, Position]:
        f = self._filters
        if f is None:
            return {sid: split.end for sid, (split, _pos) in splits.items()}
        ends: dict[str, Position] = {
            sid: split.end if f.keeps_file(split.path) else pos for sid, (split, pos) in splits.items()
        }
        kept = sum(1 for sid, (_s, pos) in splits.items() if ends[sid] != pos)
        LOG.info("pushed filters %s: %d of %d files to read", f.applied, kept, len(splits))
        return ends

    @staticmethod
    def _row_group_bytes(split: FileSourceSplit) -> float:
        return split.file_size / split.length if split.length else 0.0

    @override
    def backlog(self, split: FileSourceSplit, start: Position, end: Position) -> Backlog:
        n = max(0, int(end) - int(start))
        match split.kind:
            case SplitKind.LINES:
                return Backlog(bytes=n)
            case SplitKind.GZIP:
                return Backlog(bytes=split.file_size if n else 0)
            case _:
                return Backlog(bytes=int(n * self._row_group_bytes(split)) if n else 0)

    @override
    def cut(
        self,
        split: FileSourceSplit,
        start: Position,
        end: Position,
        max_records: int | None,
        max_bytes: int | None,
    ) -> Position:
        s, e = int(start), int(end)
        if max_bytes is None:
            return e
        if max_bytes <= 0:
            return s
        match split.kind:
            case SplitKind.LINES:
                return min(e, s + max_bytes)
            case SplitKind.GZIP:
                return e if split.file_size <= max_bytes else s
            case _:
                # like a line that starts inside the admitted bytes, one row group is always admitted
                per = self._row_group_bytes(split)
                return min(e, s + (max(1, int(max_bytes // per)) if per else e - s))

    @override
    def smallest_cut(self, split: FileSourceSplit, start: Position, end: Position) -> Position:
        # one line (the line starting at the admitted byte is read whole), one row group; a
        # compressed file only whole: it waits until its share covers it (or nothing else can progress)
        return self.cut(split, start, end, None, 1)

    @override
    def is_finished(self, split: FileSourceSplit, position: Position) -> bool:
        return int(position) >= split.end

    @override
    def range_splits(self, split: FileSourceSplit, start: Position, end: Position) -> list[FileSourceSplit]:
        s, e = int(start), int(end)
        if s >= e:
            return []
        if self._filters is not None and split.kind is SplitKind.ROW_GROUPS and self._filters.on_data:
            keep = self._filters.row_groups(split.path)
            runs = _runs([i for i in range(s, e) if keep[i]])
            read = sum(b - a for a, b in runs)
            LOG.info("pushed filters: %d of %d row groups of %s to read", read, e - s, split.path)
            return [piece for a, b in runs for piece in self._pieces(split, a, b)]
        return self._pieces(split, s, e)

    def _pieces(self, split: FileSourceSplit, s: int, e: int) -> list[FileSourceSplit]:
        match split.kind:
            case SplitKind.GZIP:
                return [split.with_range(0, split.file_size)]
            case SplitKind.LINES:
                step = self.options.split_size_bytes
            case _:
                per = self._row_group_bytes(split)
                step = max(1, int(self.options.split_size_bytes // per)) if per else e - s
        return [split.with_range(a, min(a + step, e)) for a in range(s, e, step)]

    @override
    def packing(self, split: FileSourceSplit) -> RangePacking:
        return RangePacking(self.options.max_partition_bytes, OPEN_COST_BYTES, "bytes")

    # --- event time (eventTime.alignment=cut, Parquet only): row-group statistics, see event_time.py
    @override
    def event_time_lookup(self) -> ParquetEventTimes:
        if self._times is None:
            raise ConnectorError("files-unified looks up event times only with eventTime.column set")
        return self._times


def _runs(indexes: list[int]) -> list[tuple[int, int]]:
    """Consecutive ``indexes`` as ``[start, end)`` runs."""
    runs: list[tuple[int, int]] = []
    for i in indexes:
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs
