"""``FileSplitEnumerator``: lists files once (bounded) or every ``discoveryIntervalMs`` (continuous).

Pull-based, like Flink's file source: a reader asks for a split and gets the oldest pending file;
a reader that asks while nothing is pending waits for the next discovery (continuous) or is told
there are no more splits (bounded, after the listing).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from typing_extensions import override

from connector_base import (
    ConnectorError,
    InvalidOptionError,
    SplitEnumerator,
    SplitEnumeratorContext,
    VersionedSerializer,
)
from connector_base.backlog_status import BacklogStatus
from connector_base.serialization import Json
from connectors.files.listing import (
    FileStatus,
    NameFilter,
    glob_matches_anything,
    is_glob,
    list_files,
    local_path,
)
from connectors.files.split import FileSourceSplit, FileSourceSplitSerializer

LOG = logging.getLogger(__name__)

BACKLOG_ENTER_FILES = 10
"""Pending (unassigned) files at which the enumerator reports backlog (FLIP-309)."""
BACKLOG_EXIT_FILES = 0
"""Pending files at or below which it reports no backlog again."""

SplitFactory = Callable[[FileStatus], FileSourceSplit]
"""Turns a discovered file into its whole-file split (may read a footer; may raise)."""


@dataclass(slots=True)
class FileEnumeratorState:
    """The checkpoint: the paths already handed out, and the discovered splits not yet assigned.

    ``mtimes`` holds each processed path's modification time (what ``maxFileAge`` ages them by) and
    ``age_floor_ms`` the time before which a listed file is ignored (``None``: no listing yet).
    """

    processed: list[str] = field(default_factory=list)
    pending: list[FileSourceSplit] = field(default_factory=list)
    mtimes: dict[str, int] = field(default_factory=dict)
    age_floor_ms: int | None = None


class FileEnumeratorStateSerializer(VersionedSerializer[FileEnumeratorState]):
    """Version 2: ``{"processed": {path: mtime}, "pending": [split, ...], "ageFloorMs": ms | null}``."""

    _splits = FileSourceSplitSerializer()

    @property
    @override
    def version(self) -> int:
        return 2

    @override
    def to_json(self, value: FileEnumeratorState) -> Json:
        return {
            "processed": {p: value.mtimes.get(p) for p in sorted(value.processed)},
            "pending": [self._splits.serialize(s) for s in value.pending],
            "ageFloorMs": value.age_floor_ms,
        }

    @override
    def from_json(self, version: int, data: Json) -> FileEnumeratorState:
        pending = [self._splits.deserialize(s) for s in data["pending"]]
        match version:
            case 1:  # processed paths only: no modification times, no age floor
                return FileEnumeratorState([str(p) for p in data["processed"]], pending)
            case 2:
                processed: dict[str, int | None] = data["processed"]
                floor = data.get("ageFloorMs")
                return FileEnumeratorState(
                    sorted(processed),
                    pending,
                    {str(p): int(m) for p, m in processed.items() if m is not None},
                    None if floor is None else int(floor),
                )
            case _:
                raise self.unsupported(version)


@dataclass(frozen=True, slots=True)
class FileRetention:
    """How the enumerator bounds what it remembers and orders what it hands out.

    ``max_file_age_ms``: after a listing, files older than the newest seen minus this are ignored
    and forgotten (``None``: kept until they leave the listing); ``latest_first``: newest first.
    """

    max_file_age_ms: int | None = None
    latest_first: bool = False


@dataclass(frozen=True, slots=True)
class _Discovery:
    splits: list[FileSourceSplit]
    incomplete: list[str]
    listed: dict[str, int]


class FileSplitEnumerator(SplitEnumerator[FileSourceSplit, FileEnumeratorState]):
    """Discovers files under a path and hands them out, one whole-file split per request.

    Threading: enumerator methods and the discovery handler run on the coordinator thread; the
    listing itself runs through ``context.call_async`` (off that thread in the local runtime, inline
    at the start of ``latestOffset`` on the Spark driver).
    """

    def __init__(
        self,
        context: SplitEnumeratorContext[FileSourceSplit],
        path: str,
        recursive: bool,
        split_factory: SplitFactory,
        continuous: bool,
        discovery_interval_s: float,
        state: FileEnumeratorState | None = None,
        backlog_files: tuple[int, int] = (BACKLOG_ENTER_FILES, BACKLOG_EXIT_FILES),
        retention: FileRetention | None = None,
        names: NameFilter | None = None,
    ) -> None:
        self._context = context
        self._backlog = BacklogStatus(context, backlog_files[0], backlog_files[1], "pending files")
        self._path = path
        self._recursive = recursive
        self._names = names
        self._split_factory = split_factory
        self._continuous = continuous
        self._interval_s = discovery_interval_s
        self._retention = retention or FileRetention()
        # processed path -> modification time (None: restored from a version 1 checkpoint)
        self._processed: dict[str, int | None] = (
            {p: state.mtimes.get(p) for p in state.processed} if state else {}
        )
        self._pending: list[FileSourceSplit] = list(state.pending) if state else []
        self._pending_paths: set[str] = {s.path for s in self._pending}
        self._age_floor_ms: int | None = state.age_floor_ms if state else None
        self._newest_ms = max(
            [m for m in self._processed.values() if m is not None] + [s.mtime_ms for s in self._pending],
            default=0,
        )
        # a restored bounded enumerator lists again and adds the files it does not know: on Spark a
        # restart is a new run, which reads "the files present when the query starts" (as Spark's
        # file source under Trigger.AvailableNow); files already processed are never read twice
        self._listed = False
        self._fresh = state is None
        self._warned_empty = False
        self._awaiting: list[int] = []

    @override
    def start(self) -> None:
        if self._continuous:
            self._context.call_async(self._discover, self._on_discovered, 0.0, self._interval_s)
        elif not self._listed:
            self._context.call_async(self._discover, self._on_discovered)

    def _discover(self) -> _Discovery:
        """List and build splits for files not seen yet (off the coordinator thread)."""
        processed, pending, floor = self._processed, self._pending_paths, self._age_floor_ms
        splits: list[FileSourceSplit] = []
        incomplete: list[str] = []
        statuses = list_files(self._path, self._recursive, self._names)
        if not statuses and self._fresh:
            self._nothing_matched()
        for status in statuses:
            if status.path in processed or status.path in pending:
                continue
            if floor is not None and status.mtime_ms < floor:
                continue  # older than maxFileAge before the newest file: ignored, as Spark
            try:
                splits.append(self._split_factory(status))
            except ConnectorError:
                raise
            except Exception as e:  # a file still being written (no Parquet footer yet), unreadable
                if not self._continuous:
                    raise ConnectorError(f"cannot plan file {status.path}: {type(e).__name__}: {e}") from e
                LOG.warning("skipping %s until the next discovery: %s", status.path, e)
                incomplete.append(status.path)
        return _Discovery(splits, incomplete, {st.path: st.mtime_ms for st in statuses})

    def _nothing_matched(self) -> None:
        """A glob matching no file fails a bounded read, as Spark's ``PATH_NOT_FOUND``; else a warning."""
        if not is_glob(local_path(self._path)) or glob_matches_anything(self._path, self._recursive):
            return  # an existing, empty directory, or files pathGlobFilter rejects: nothing to read
        if not self._continuous:
            raise InvalidOptionError(
                "path",
                self._path,
                "a glob that matches at least one file (Spark's file sources fail with PATH_NOT_FOUND "
                "too); set continuous=true to wait for files to appear",
            )
        if not self._warned_empty:
            self._warned_empty = True
            LOG.warning("path %s matches no file yet; waiting for files to appear", self._path)

    def _on_discovered(self, result: _Discovery | None, error: BaseException | None) -> None:
        if error is not None:
            if not self._continuous:
                raise error
            LOG.warning(
                "file discovery under %s failed; retrying in %.1fs: %s", self._path, self._interval_s, error
            )
            return
        assert result is not None
        floor = self._age_floor_ms
        fresh = [
            s
            for s in result.splits
            if s.path not in self._processed
            and s.path not in self._pending_paths
            and (floor is None or s.mtime_ms >= floor)
        ]
        self._pending_paths.update(s.path for s in fresh)
        self._pending.extend(fresh)
        if self._retention.latest_first:
            self._pending.sort(key=lambda s: (-s.mtime_ms, s.path))
        self._forget(result.listed)
        if fresh:
            LOG.info("discovered %d new files under %s", len(fresh), self._path)
        if not self._continuous:
            self._listed = True
        self._serve_awaiting()
        self._backlog.update(len(self._pending))

    def _forget(self, listed: Mapping[str, int]) -> None:
        """Bound the processed set: drop paths no longer listed, and (maxFileAge) those aged out.

        A path that left the listing (archived, deleted, moved) can only come back as a new file;
        the floor moves to the newest file seen minus ``maxFileAge`` and applies from the next
        listing on, so the first listing reads every file (as Spark's file source).
        """
        self._processed = {
            p: (m if m is not None else listed[p]) for p, m in self._processed.items() if p in listed
        }
        self._newest_ms = max(self._newest_ms, max(listed.values(), default=0))
        age = self._retention.max_file_age_ms
        if age is None:
            return
        self._age_floor_ms = max(self._age_floor_ms or 0, self._newest_ms - age)
        floor = self._age_floor_ms
        self._processed = {p: m for p, m in self._processed.items() if m is None or m >= floor}

    def _serve_awaiting(self) -> None:
        waiting, self._awaiting = self._awaiting, []
        for subtask in waiting:
            self._serve(subtask)

    def _serve(self, subtask: int) -> None:
        if subtask not in self._context.registered_readers():
            return
        if self._pending:
            split = self._pending.pop(0)
            self._pending_paths.discard(split.path)
            self._processed[split.path] = split.mtime_ms
            self._context.assign_split(split, subtask)
            self._backlog.update(len(self._pending))
        elif self._listed and not self._continuous:
            self._context.signal_no_more_splits(subtask)
        elif subtask not in self._awaiting:
            self._awaiting.append(subtask)

    @override
    def handle_split_request(self, subtask_id: int, requester_hostname: str | None = None) -> None:
        self._serve(subtask_id)

    @override
    def add_splits_back(self, splits: Sequence[FileSourceSplit], subtask_id: int) -> None:
        self._pending[:0] = list(splits)
        for split in splits:
            self._pending_paths.add(split.path)
            self._processed.pop(split.path, None)
        self._serve_awaiting()
        self._backlog.update(len(self._pending))

    @override
    def add_reader(self, subtask_id: int) -> None:
        """Pull-based: a new reader gets splits when it asks."""

    @override
    def snapshot_state(self, checkpoint_id: int) -> FileEnumeratorState:
        processed = sorted(p for p in self._processed if p not in self._pending_paths)
        mtimes = {p: m for p in processed if (m := self._processed[p]) is not None}
        return FileEnumeratorState(processed, list(self._pending), mtimes, self._age_floor_ms)

    @property
    def pending(self) -> Iterable[FileSourceSplit]:
        """The discovered splits not yet assigned (for tests)."""
        return tuple(self._pending)
