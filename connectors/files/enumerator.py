"""``FileSplitEnumerator``: lists files once (bounded) or every ``discoveryIntervalMs`` (continuous).

Pull-based, like Flink's file source: a reader asks for a split and gets the oldest pending file;
a reader that asks while nothing is pending waits for the next discovery (continuous) or is told
there are no more splits (bounded, after the listing).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from connector_base import (
    ConnectorError,
    InvalidOptionError,
    SplitEnumerator,
    SplitEnumeratorContext,
    VersionedSerializer,
)
from connector_base.backlog_status import BacklogStatus
from connector_base.serialization import Json
from connectors.files.listing import FileStatus, is_glob, list_files, local_path
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
    """The checkpoint: every path already discovered, and the discovered splits not yet assigned."""

    processed: list[str] = field(default_factory=list)
    pending: list[FileSourceSplit] = field(default_factory=list)


class FileEnumeratorStateSerializer(VersionedSerializer[FileEnumeratorState]):
    """Version 1: ``{"processed": [path, ...], "pending": [split, ...]}``."""

    _splits = FileSourceSplitSerializer()

    @property
    def version(self) -> int:  # noqa: D102
        return 1

    def to_json(self, value: FileEnumeratorState) -> Json:  # noqa: D102
        return {
            "processed": sorted(value.processed),
            "pending": [self._splits.serialize(s) for s in value.pending],
        }

    def from_json(self, version: int, data: Json) -> FileEnumeratorState:  # noqa: D102
        match version:
            case 1:
                return FileEnumeratorState(
                    [str(p) for p in data["processed"]],
                    [self._splits.deserialize(s) for s in data["pending"]],
                )
            case _:
                raise self.unsupported(version)


@dataclass(frozen=True, slots=True)
class _Discovery:
    splits: list[FileSourceSplit]
    incomplete: list[str]


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
    ) -> None:
        self._context = context
        self._backlog = BacklogStatus(context, backlog_files[0], backlog_files[1], "pending files")
        self._path = path
        self._recursive = recursive
        self._split_factory = split_factory
        self._continuous = continuous
        self._interval_s = discovery_interval_s
        self._known: set[str] = set(state.processed) if state else set()
        self._pending: list[FileSourceSplit] = list(state.pending) if state else []
        self._known.update(s.path for s in self._pending)
        # a restored bounded enumerator lists again and adds the files it does not know: on Spark a
        # restart is a new run, which reads "the files present when the query starts" (as Spark's
        # file source under Trigger.AvailableNow); files already processed are never read twice
        self._listed = False
        self._fresh = state is None
        self._warned_empty = False
        self._awaiting: list[int] = []

    def start(self) -> None:  # noqa: D102
        if self._continuous:
            self._context.call_async(self._discover, self._on_discovered, 0.0, self._interval_s)
        elif not self._listed:
            self._context.call_async(self._discover, self._on_discovered)

    def _discover(self) -> _Discovery:
        """List and build splits for files not seen yet (off the coordinator thread)."""
        known = self._known
        splits: list[FileSourceSplit] = []
        incomplete: list[str] = []
        statuses = list_files(self._path, self._recursive)
        if not statuses and self._fresh:
            self._nothing_matched()
        for status in statuses:
            if status.path in known:
                continue
            try:
                splits.append(self._split_factory(status))
            except ConnectorError:
                raise
            except Exception as e:  # a file still being written (no Parquet footer yet), unreadable
                if not self._continuous:
                    raise ConnectorError(f"cannot plan file {status.path}: {type(e).__name__}: {e}") from e
                LOG.warning("skipping %s until the next discovery: %s", status.path, e)
                incomplete.append(status.path)
        return _Discovery(splits, incomplete)

    def _nothing_matched(self) -> None:
        """A glob matching no file fails a bounded read, as Spark's ``PATH_NOT_FOUND``; else a warning."""
        if not is_glob(local_path(self._path)):
            return  # an existing, empty directory: nothing to read, as with Spark's file sources
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
        fresh = [s for s in result.splits if s.path not in self._known]
        for s in fresh:
            self._known.add(s.path)
        self._pending.extend(fresh)
        if fresh:
            LOG.info("discovered %d new files under %s", len(fresh), self._path)
        if not self._continuous:
            self._listed = True
        self._serve_awaiting()
        self._backlog.update(len(self._pending))

    def _serve_awaiting(self) -> None:
        waiting, self._awaiting = self._awaiting, []
        for subtask in waiting:
            self._serve(subtask)

    def _serve(self, subtask: int) -> None:
        if subtask not in self._context.registered_readers():
            return
        if self._pending:
            self._context.assign_split(self._pending.pop(0), subtask)
            self._backlog.update(len(self._pending))
        elif self._listed and not self._continuous:
            self._context.signal_no_more_splits(subtask)
        elif subtask not in self._awaiting:
            self._awaiting.append(subtask)

    def handle_split_request(self, subtask_id: int, requester_hostname: str | None = None) -> None:  # noqa: D102
        self._serve(subtask_id)

    def add_splits_back(self, splits: Sequence[FileSourceSplit], subtask_id: int) -> None:  # noqa: D102
        self._pending[:0] = list(splits)
        self._serve_awaiting()
        self._backlog.update(len(self._pending))

    def add_reader(self, subtask_id: int) -> None:  # noqa: D102
        """Pull-based: a new reader gets splits when it asks."""

    def snapshot_state(self, checkpoint_id: int) -> FileEnumeratorState:  # noqa: D102
        pending_paths = {s.path for s in self._pending}
        return FileEnumeratorState(sorted(self._known - pending_paths), list(self._pending))

    @property
    def pending(self) -> Iterable[FileSourceSplit]:
        """The discovered splits not yet assigned (for tests)."""
        return tuple(self._pending)
