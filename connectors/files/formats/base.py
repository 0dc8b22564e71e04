"""What every format shares: the output layout (``ReadSchema``) and line-chunk parsing with bad-line handling.

A row format parses a chunk of whole lines in bulk (one pyarrow call). Only when that fails does
it split the chunk in halves, recursively, until the bad lines are isolated (``O(bad * log n)``
bulk calls instead of one call per line); each bad line then follows ``mode``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import numpy as np
import pyarrow as pa

from connector_base import MalformedRecordError
from connectors.files.options import FILE_COLUMN, OFFSET_COLUMN, FileSourceOptions, ParseMode
from connectors.files.partitions import partition_value, partition_values

NEWLINE = 10
CARRIAGE_RETURN = 13
UTF8_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class ReadSchema:
    """The Arrow schema Spark expects, split into data columns, metadata and the corrupt-record column."""

    output: pa.Schema
    data: pa.Schema
    corrupt: str | None = None
    with_file: bool = False
    with_offset: bool = False
    partitions: tuple[str, ...] = ()
    """Columns filled from the file's ``name=value`` directories below ``root`` (see partitions.py)."""
    root: str = ""

    @classmethod
    def of(cls, output: pa.Schema, options: FileSourceOptions, partitions: Sequence[str] = ()) -> ReadSchema:
        """Classify the columns of ``output`` (Spark's schema as Arrow) for ``options``; ``partitions``
        are the partition column names found under the path."""
        meta = {FILE_COLUMN, OFFSET_COLUMN} if options.include_metadata else set()
        # the corrupt-record column is never a data column: in PERMISSIVE mode it holds the bad lines,
        # in DROPMALFORMED and FAILFAST it stays null (as Spark's CSV and JSON sources)
        corrupt = options.corrupt_column
        if corrupt is not None and corrupt not in output.names:
            corrupt = None
        parts = tuple(p for p in partitions if p in output.names and p not in meta and p != corrupt)
        skip = meta | ({corrupt} if corrupt else set()) | set(parts)
        data = pa.schema([f for f in output if f.name not in skip])
        return cls(
            output,
            data,
            corrupt,
            FILE_COLUMN in meta and FILE_COLUMN in output.names,
            OFFSET_COLUMN in meta and OFFSET_COLUMN in output.names,
            parts,
            options.path,
        )

    def partition_scalars(self, path: str) -> dict[str, pa.Scalar]:
        """The partition columns' values of the file at ``path``, typed as in ``output``."""
        raw = dict(partition_values(self.root, path))
        out = {}
        for name in self.partitions:
            t = self.output.field(name).type
            out[name] = pa.scalar(partition_value(raw.get(name), t), t)
        return out

    def assemble(
        self, data: pa.Table, path: str, offsets: np.ndarray | None, corrupt: pa.Array | None = None
    ) -> pa.Table:
        """The output table: ``data`` columns (in ``self.data`` order) plus the extra columns."""
        n = data.num_rows
        parts = self.partition_scalars(path) if self.partitions else {}
        columns = []
        for field in self.output:
            name = field.name
            if name in parts:
                col = pa.repeat(parts[name], n) if n else pa.array([], field.type)
            elif name == self.corrupt:
                col = corrupt if corrupt is not None else pa.nulls(n, field.type)
            elif self.with_file and name == FILE_COLUMN:
                col = pa.repeat(pa.scalar(path, field.type), n) if n else pa.array([], field.type)
            elif self.with_offset and name == OFFSET_COLUMN:
                col = pa.array(offsets if offsets is not None else np.zeros(n, np.int64), field.type)
            else:
                col = data.column(name)
                if col.type != field.type:
                    col = col.cast(field.type)
            columns.append(col)
        return pa.Table.from_arrays(columns, schema=self.output)


def _terminators(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the bytes that end a line (``\\n``, or a ``\\r`` not followed by ``\\n``), and
    which of them are the ``\\n`` of a ``\\r\\n``."""
    nl = buf == NEWLINE
    cr = buf == CARRIAGE_RETURN
    if not cr.any():
        term = np.flatnonzero(nl)
        return term, np.zeros(len(term), bool)
    lone = cr.copy()
    lone[:-1] &= ~nl[1:]
    term = np.flatnonzero(nl | lone)
    crlf = np.zeros(len(term), bool)
    at = term[term > 0]
    crlf[term > 0] = nl[at] & cr[at - 1]
    return term, crlf


def line_bounds(data: bytes | memoryview) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (without the separator) of every line; no empty line after a final separator.

    Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``, as Hadoop's ``LineRecordReader`` (so Spark's
    text, json and csv sources) ends them.
    """
    buf = np.frombuffer(data, np.uint8)
    term, crlf = _terminators(buf)
    starts = np.concatenate((np.zeros(1, np.int64), term + 1))
    ends = np.concatenate((term - crlf, np.array([len(buf)], np.int64)))
    if len(buf) == 0 or buf[-1] in (NEWLINE, CARRIAGE_RETURN):
        starts, ends = starts[:-1], ends[:-1]
    return starts, ends


def count_lines(data: bytes | memoryview) -> int:
    """How many lines ``data`` holds (a last line without separator counts)."""
    buf = np.frombuffer(data, np.uint8)
    if isinstance(data, bytes) and b"\r" not in data or not (buf == CARRIAGE_RETURN).any():
        n = int(np.count_nonzero(buf == NEWLINE))
        return n + 1 if len(buf) and buf[-1] != NEWLINE else n
    return len(line_bounds(data)[0])


def bom_length(data: bytes | memoryview) -> int:
    """3 when ``data`` starts with a UTF-8 byte-order mark (skipped at a file's start, as Hadoop does)."""
    return 3 if bytes(data[:3]) == UTF8_BOM else 0


def check_utf8(data: bytes | memoryview) -> None:
    """Raise ``ValueError`` when ``data`` is not UTF-8 (validated by Arrow, without a copy)."""
    offsets = pa.py_buffer(np.array([0, len(data)], np.int64))
    raw = pa.Array.from_buffers(pa.large_binary(), 1, [None, offsets, pa.py_buffer(data)])
    try:
        raw.cast(pa.large_string())
    except pa.ArrowInvalid as e:
        raise ValueError(f"invalid UTF-8: {e}") from None


class LineFormat(ABC):
    """A line-oriented format (one record per line); subclasses parse chunks in bulk."""

    name = "lines"
    skips_blank_lines = True
    """Whether blank lines hold no record (jsonl, csv) or an empty one (text)."""
    strict_values = False
    """Whether ``partial_row`` values are typed (JSON) rather than text to cast (csv); see ``fits``."""

    def __init__(self, schema: ReadSchema, options: FileSourceOptions) -> None:
        self.schema = schema
        self.options = options
        self.mode = options.mode

    @abstractmethod
    def parse_bulk(self, data: bytes | memoryview, whole: bool) -> pa.Table:
        """Parse whole lines into a table of ``schema.data``; raise on any bad line.

        ``whole``: use one parse block for all of ``data`` (needed when a line may be very long).
        """

    def drop_header(self, data: bytes | memoryview, at_file_start: bool) -> int:
        """How many leading bytes are not data (a header line); 0 by default."""
        return 0

    def recover_line(self, line: bytes) -> pa.Table | None:
        """The rows of a line the bulk parser rejected but Spark's parser reads (rows of
        ``schema.data``), or ``None`` when the line is malformed; by default every rejected line is."""
        return None

    def partial_row(self, line: bytes) -> dict[str, Any] | None:
        """``PERMISSIVE``: the values of a malformed line that still fit their columns (the others
        null), as Spark keeps them; ``None`` when nothing of the line can be read."""
        return None

    def parse(self, data: bytes | memoryview, base_offset: int, path: str, at_file_start: bool) -> pa.Table:
        """Parse a chunk of whole lines that starts at ``base_offset`` into the output table."""
        skip = bom_length(data) if at_file_start else 0
        skip += self.drop_header(memoryview(data)[skip:], at_file_start)
        if skip:
            data = memoryview(data)[skip:]
            base_offset += skip
        if len(data) == 0:
            return self.schema.output.empty_table()
        try:
            table = self.parse_bulk(data, whole=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
            table = None
        if table is not None:
            if not self.schema.with_offset and table.num_rows == count_lines(data):
                return self.schema.assemble(table, path, None)
            offsets = self._row_offsets(data, table.num_rows)
            if offsets is not None:
                return self.schema.assemble(table, path, offsets + base_offset)
        return self._parse_line_by_line(data, base_offset, path)

    def _row_offsets(self, data: bytes | memoryview, rows: int) -> np.ndarray | None:
        """Start offsets of the lines that made ``rows`` rows, or ``None`` when they do not match."""
        starts, ends = line_bounds(data)
        if len(starts) == rows:
            return starts
        if self.skips_blank_lines:
            keep = ends > starts
            if int(keep.sum()) == rows:
                return starts[keep]
            raw = bytes(data)
            keep = np.array(
                [bool(raw[s:e].strip()) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)], bool
            )
            if int(keep.sum()) == rows:
                return starts[keep]
        return None

    def _parse_line_by_line(self, data: bytes | memoryview, base_offset: int, path: str) -> pa.Table:
        raw = bytes(data)
        starts, ends = line_bounds(raw)
        lines: list[tuple[int, bytes]] = []
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            line = raw[s:e]
            if self.skips_blank_lines and not line.strip():
                continue
            lines.append((s, line))
        pieces: list[pa.Table] = []
        offsets: list[int] = []
        corrupt: list[str | None] = []

        def solve(lo: int, hi: int) -> None:
            chunk = b"\n".join(line for _o, line in lines[lo:hi]) + b"\n"
            error: Exception | None = None
            try:
                table = self.parse_bulk(chunk, whole=True)
                if table.num_rows != hi - lo:
                    error = ValueError(f"{table.num_rows} records in one line")
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as e:
                error = e
            if error is None:
                pieces.append(table)
                offsets.extend(o for o, _l in lines[lo:hi])
                corrupt.extend([None] * (hi - lo))
                return
            if hi - lo > 1:
                mid = (lo + hi) // 2
                solve(lo, mid)
                solve(mid, hi)
                return
            offset, line = lines[lo]
            recovered = self.recover_line(line)
            if recovered is not None:  # one row, or none or several (a JSON array of objects)
                pieces.append(recovered)
                offsets.extend([offset] * recovered.num_rows)
                corrupt.extend([None] * recovered.num_rows)
                return
            self._bad_line(path, base_offset + offset, line, error)
            if self.mode is ParseMode.PERMISSIVE:
                partial = self.partial_row(line)
                if partial is None:
                    pieces.append(_null_table(self.schema.data, 1))
                else:
                    pieces.append(_partial_table(self.schema.data, partial, self.strict_values))
                offsets.append(offset)
                corrupt.append(line.decode("utf-8", "replace"))

        if lines:
            solve(0, len(lines))
        if not pieces:
            return self.schema.output.empty_table()
        data_table = pa.concat_tables(
            [p.select(self.schema.data.names).cast(self.schema.data) for p in pieces]
        )
        corrupt_col = pa.array(corrupt, pa.string()) if self.schema.corrupt else None
        return self.schema.assemble(
            data_table, path, np.asarray(offsets, np.int64) + base_offset, corrupt_col
        )

    def _bad_line(self, path: str, offset: int, line: bytes, error: Exception) -> None:
        if self.mode is ParseMode.FAILFAST:
            preview = line[:200].decode("utf-8", "replace")
            raise MalformedRecordError(
                f"malformed {self.name} record in file {path} at byte offset {offset}: {error} "
                f"(line starts with {preview!r}); set option mode to DROPMALFORMED to skip such lines "
                f"or PERMISSIVE to keep them in a corrupt-record column"
            ) from None


def fits(value: Any, t: pa.DataType, strict: bool = False) -> Any:
    """``value`` when it converts to ``t``, else ``None``. Strings are cast (csv fields are text);
    ``strict`` (JSON values, as Spark's JSON parser takes them): a string only for a string, date or
    timestamp column, a fraction never for an integer column, a boolean only for a boolean one."""
    if value is None:
        return None
    if strict and not _json_fits(value, t):
        return None
    if pa.types.is_decimal(t) and not isinstance(value, bool):
        return _decimal(value, t)
    if isinstance(value, str) and pa.types.is_timestamp(t) and t.tz is not None:
        return _timestamp(value, t)
    try:
        if isinstance(value, str) and not pa.types.is_string(t):
            return pa.scalar(value, pa.string()).cast(t).as_py()
        return pa.scalar(value, t).as_py()
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None


def _decimal(value: Any, t: pa.DataType) -> Decimal | None:
    """``value`` as Spark reads a decimal: any number syntax (``1e2``), rounded half up to the
    column's scale; ``None`` when it is no number or needs more digits than the precision."""
    try:
        d = Decimal(value.strip() if isinstance(value, str) else str(value))
        if not d.is_finite():
            return None
        d = d.quantize(Decimal(1).scaleb(-t.scale), rounding=ROUND_HALF_UP)
    except (InvalidOperation, ValueError):
        return None
    return d if len(d.as_tuple().digits) <= t.precision else None


def _timestamp(value: str, t: pa.DataType) -> Any:
    """Text with an offset, or without one read as UTC (as the bulk parsers read it)."""
    text = pa.scalar(value, pa.string())
    for via in (t, pa.timestamp(t.unit)):
        try:
            return text.cast(via).cast(t).as_py()
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            continue
    return None


def _json_fits(value: Any, t: pa.DataType) -> bool:
    if isinstance(value, bool):
        return pa.types.is_boolean(t)
    if isinstance(value, int):
        return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
    if isinstance(value, float):
        return pa.types.is_floating(t) or pa.types.is_decimal(t)
    if isinstance(value, str):  # Spark's JSON parser also reads a decimal from a string
        return (
            pa.types.is_string(t)
            or pa.types.is_large_string(t)
            or pa.types.is_temporal(t)
            or (pa.types.is_decimal(t))
        )
    return not (pa.types.is_primitive(t) or pa.types.is_string(t) or pa.types.is_large_string(t))


def _partial_table(schema: pa.Schema, row: dict[str, Any], strict: bool) -> pa.Table:
    columns = [pa.array([fits(row.get(f.name), f.type, strict)], f.type) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _null_table(schema: pa.Schema, n: int) -> pa.Table:
    return pa.Table.from_arrays([pa.nulls(n, f.type) for f in schema], schema=schema)
