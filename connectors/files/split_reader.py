"""``FileSplitReader``: reads its splits one after the other, one chunk (or row group) per fetch."""

from __future__ import annotations

import logging
import os
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Sequence

import pyarrow as pa
from typing_extensions import override

from connector_base import (
    ConnectorError,
    DataLossError,
    RecordsBySplits,
    SplitReader,
    SplitsAddition,
    SplitsChange,
)
from connectors.files.compression import decompress, decompress_readable
from connectors.files.formats import LineFormat, ParquetRowGroupReader, ReadSchema, line_format
from connectors.files.formats.parquet import BATCH_ROWS as PARQUET_BATCH_ROWS
from connectors.files.options import FileFormat, FileSourceOptions
from connectors.files.split import FileSourceSplit, SplitKind
from connectors.files.time_zone import read_time_zone

LOG = logging.getLogger(__name__)

CHUNK_BYTES = 16 * 1024 * 1024
CHUNK_BYTES_CONFIG = "files.reader.fetch.bytes"
"""Reader configuration key: the bytes a fetch reads of a text split (default ``CHUNK_BYTES``)."""
"""Bytes read and parsed per fetch (a line longer than this is read whole)."""
SCAN_BYTES = 64 * 1024
"""Read-ahead while looking for the end of a line."""

FileChunk = tuple[pa.Table | None, int | None]
"""What a fetch yields per split: rows in the output schema, and the position after them (or ``None``)."""


def _pread(fd: int, path: str, offset: int, n: int) -> bytes:
    parts = []
    while n > 0:
        b = os.pread(fd, n, offset)
        if not b:
            raise DataLossError(f"file {path} ended at byte {offset}, before the size recorded at discovery")
        parts.append(b)
        offset += len(b)
        n -= len(b)
    return parts[0] if len(parts) == 1 else b"".join(parts)


class _MissingFileError(DataLossError):
    """A file deleted between discovery and its read (``ignoreMissingFiles`` skips it)."""


def _open(path: str) -> int:
    try:
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise _MissingFileError(
            f"file {path} was deleted after it was discovered (ignoreMissingFiles=true skips such files)"
        ) from None


class _OpenSplit(ABC):
    """A split being read; ``next`` returns the elements of one fetch and whether the split is done."""

    def __init__(self, split: FileSourceSplit) -> None:
        self.split = split
        self.path = split.path

    @abstractmethod
    def next(self) -> tuple[list[FileChunk], bool]:
        """The next chunk(s) of this split."""

    def close(self) -> None:
        """Release the file."""

    def _check_size(self, actual: int) -> None:
        if actual < self.split.file_size:
            raise DataLossError(
                f"file {self.path} has {actual} bytes, fewer than the {self.split.file_size} recorded when "
                f"it was discovered: it was truncated or replaced after discovery"
            )
        if actual > self.split.file_size and self.split.kind is SplitKind.LINES:
            LOG.warning(
                "file %s grew after discovery; reading its first %d bytes", self.path, self.split.file_size
            )


class _LineRange(_OpenSplit):
    """An uncompressed byte range: the lines that start in ``[position, end)``."""

    def __init__(self, split: FileSourceSplit, fmt: LineFormat, chunk_bytes: int) -> None:
        super().__init__(split)
        self.fmt = fmt
        self.chunk_bytes = chunk_bytes
        self.pos = split.start_position
        self.end = split.end
        self.size = split.file_size
        self.fd: int | None = None

    def _line_start(self, x: int) -> int:
        """The first line start at or after ``x`` (within the recorded size)."""
        if x <= 0:
            return 0
        if x >= self.size:
            return self.size
        assert self.fd is not None
        at = x - 1
        while at < self.size:
            block = _pread(self.fd, self.path, at, min(SCAN_BYTES, self.size - at))
            k = block.find(b"\n")
            if k >= 0:
                return at + k + 1
            at += len(block)
        return self.size

    @override
    def next(self) -> tuple[list[FileChunk], bool]:
        if self.fd is None:
            self.fd = _open(self.path)
            self._check_size(os.fstat(self.fd).st_size)
            self.pos = self._line_start(self.pos)
        pos = self.pos
        if pos >= self.end:
            return [], True
        target = min(pos + self.chunk_bytes, self.end)
        data = _pread(self.fd, self.path, pos, target - pos)
        k = data.rfind(b"\n") if target < self.end else -1
        if k >= 0:
            boundary = pos + k + 1
            chunk: bytes | memoryview = memoryview(data)[: k + 1] if boundary < target else data
        else:
            boundary = self._line_start(target)
            chunk = (
                data if boundary == target else data + _pread(self.fd, self.path, target, boundary - target)
            )
        table = self.fmt.parse(chunk, pos, self.path, at_file_start=pos == 0)
        self.pos = boundary
        return [(table, min(boundary, self.end))], boundary >= self.end

    @override
    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class _GzipFile(_OpenSplit):
    """A whole compressed file (gzip, bzip2, deflate), a ``multiLine`` JSON document, or a file of lines
    ended by ``lineSep`` or in another charset: decompressed and parsed in one fetch (it cannot be
    split or resumed)."""

    def __init__(
        self, split: FileSourceSplit, fmt: LineFormat, chunk_bytes: int, ignore_corrupt: bool = False
    ) -> None:
        super().__init__(split)
        self.fmt = fmt
        self.chunk_bytes = chunk_bytes
        self.ignore_corrupt = ignore_corrupt

    @override
    def next(self) -> tuple[list[FileChunk], bool]:
        if self.split.start_position >= self.split.file_size:
            return [], True
        fd = _open(self.path)
        try:
            self._check_size(os.fstat(fd).st_size)
            raw = _pread(fd, self.path, 0, self.split.file_size) if self.split.file_size else b""
        finally:
            os.close(fd)
        framed = self.fmt.framing.custom  # lines found by lineSep or decoded: parsed in one piece
        if self.ignore_corrupt:  # the lines before the first error
            whole_lines = not (self.fmt.whole_file or framed)
            data, whole = decompress_readable(self.path, raw, whole_lines=whole_lines)
            if not whole:
                LOG.warning("%s is corrupt; skipping what follows its readable part", self.path)
                if self.fmt.whole_file:  # a document read before the error counts, a cut one not
                    table = self.fmt.parse_readable(data, self.path)
                    return [(table, None), (None, self.split.file_size)], True
                if framed:
                    data = data[: self.fmt.framing.whole_lines_end(data)]
        else:
            data = decompress(self.path, raw)
        view = memoryview(data)
        out: list[FileChunk] = []
        if self.fmt.whole_file or framed:
            out.append((self.fmt.parse(data, 0, self.path, at_file_start=True), None))
            out.append((None, self.split.file_size))
            return out, True
        start = 0
        while start < len(data):
            target = start + self.chunk_bytes
            if target >= len(data):
                boundary = len(data)
            else:
                k = data.rfind(b"\n", start, target)
                if k < 0:
                    k = data.find(b"\n", target)
                boundary = len(data) if k < 0 else k + 1
            out.append(
                (self.fmt.parse(view[start:boundary], start, self.path, at_file_start=start == 0), None)
            )
            start = boundary
        out.append((None, self.split.file_size))
        return out, True


class _Skipped(_OpenSplit):
    """A split of a file ``modifiedBefore`` / ``modifiedAfter`` leaves out: read as empty."""

    @override
    def next(self) -> tuple[list[FileChunk], bool]:
        return [(None, self.split.end)], True


class _ParquetRowGroups(_OpenSplit):
    """Row groups ``[position, end)`` of a Parquet file, one row group per fetch."""

    def __init__(self, split: FileSourceSplit, schema: ReadSchema, batch_rows: int) -> None:
        super().__init__(split)
        self.schema = schema
        self.batch_rows = batch_rows
        self.pos = split.start_position
        self.reader: ParquetRowGroupReader | None = None

    @override
    def next(self) -> tuple[list[FileChunk], bool]:
        if self.pos >= self.split.end:
            return [], True
        if self.reader is None:
            os.close(_open(self.path))
            actual = os.stat(self.path).st_size
            if actual != self.split.file_size:
                raise DataLossError(
                    f"Parquet file {self.path} has {actual} bytes, not the {self.split.file_size} recorded "
                    f"when it was discovered: it was replaced after discovery"
                )
            self.reader = ParquetRowGroupReader(self.path, self.schema, self.batch_rows)
        out: list[FileChunk] = [(t, None) for t in self.reader.read(self.pos)]
        self.pos += 1
        out.append((None, self.pos))
        return out, self.pos >= self.split.end

    @override
    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()
            self.reader = None


class FileSplitReader(SplitReader[FileChunk, FileSourceSplit]):
    """Reads splits in the order they were added; each fetch returns one chunk of the current split.

    A fetch never blocks for long (one chunk of a local file), so ``wake_up`` has nothing to do.
    Splits paused by watermark alignment are passed over (the next unpaused split is read) and
    resume at their own position. No caught-up report: a file split has unread rows until it
    finishes, and then it is released, so it never goes idle while assigned.
    """

    def __init__(
        self, options: FileSourceOptions, schema: ReadSchema, chunk_bytes: int = CHUNK_BYTES
    ) -> None:
        self._options = options
        self._schema = schema
        self._chunk_bytes = chunk_bytes
        self._format: LineFormat | None = None
        self._splits: deque[_OpenSplit] = deque()
        self._paused: set[str] = set()

    def _line_format(self) -> LineFormat:
        if self._format is None:
            self._format = line_format(self._options, self._schema)
        return self._format

    def _open(self, split: FileSourceSplit) -> _OpenSplit:
        modified = self._options.modified
        if modified.active and not modified.accepts(
            split.mtime_ms, read_time_zone(self._options.csv.time_zone)
        ):
            return _Skipped(split)  # here, in the task: the session's time zone is known only here
        match split.kind:
            case SplitKind.ROW_GROUPS:
                rows = max(PARQUET_BATCH_ROWS, self._options.arrow_batch_rows or 0)
                return _ParquetRowGroups(split, self._schema, rows)
            case SplitKind.GZIP:
                return _GzipFile(
                    split, self._line_format(), self._chunk_bytes, self._options.ignore_corrupt_files
                )
            case _:
                if self._options.format is FileFormat.PARQUET:
                    raise ValueError(f"a byte-range split for a Parquet source: {split}")
                return _LineRange(split, self._line_format(), self._chunk_bytes)

    @override
    def fetch(self) -> RecordsBySplits[FileChunk]:
        out: RecordsBySplits[FileChunk] = RecordsBySplits()
        while (current := self._first_unpaused()) is not None:
            sid = current.split.split_id
            try:
                elements, done = current.next()
            except _MissingFileError:
                if not self._options.ignore_missing_files:
                    raise
                LOG.warning("skipping %s: deleted after it was discovered (ignoreMissingFiles)", current.path)
                elements, done = [(None, current.split.end)], True
            except (pa.ArrowException, OSError) as e:  # a Parquet file that is not (all) Parquet
                if current.split.kind is not SplitKind.ROW_GROUPS:
                    raise
                if not self._options.ignore_corrupt_files:
                    raise ConnectorError(
                        f"Parquet file {current.path} cannot be read: {e} (ignoreCorruptFiles=true skips it)"
                    ) from e
                LOG.warning("skipping the rest of corrupt file %s (ignoreCorruptFiles): %s", current.path, e)
                elements, done = [(None, current.split.end)], True
            if elements:
                out.add_all(sid, elements)
            if done:
                current.close()
                self._splits.remove(current)
                out.add_finished_split(sid)
            if elements:
                break
        return out

    def _first_unpaused(self) -> _OpenSplit | None:
        if not self._paused:
            return self._splits[0] if self._splits else None
        return next((s for s in self._splits if s.split.split_id not in self._paused), None)

    @override
    def pause_or_resume_splits(
        self, splits_to_pause: Sequence[FileSourceSplit], splits_to_resume: Sequence[FileSourceSplit]
    ) -> None:
        held = {s.split.split_id for s in self._splits}
        self._paused.update(s.split_id for s in splits_to_pause if s.split_id in held)
        self._paused.difference_update(s.split_id for s in splits_to_resume)

    @override
    def handle_splits_changes(self, change: SplitsChange[FileSourceSplit]) -> None:
        if isinstance(change, SplitsAddition):
            self._splits.extend(self._open(s) for s in change.splits)
            return
        removed = {s.split_id for s in change.splits}
        self._paused.difference_update(removed)
        for s in [s for s in self._splits if s.split.split_id in removed]:
            s.close()
            self._splits.remove(s)

    @override
    def wake_up(self) -> None:
        """Fetches are short; nothing to interrupt."""

    @override
    def close(self) -> None:
        while self._splits:
            self._splits.popleft().close()
