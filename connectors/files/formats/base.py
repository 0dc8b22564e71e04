"""What every format shares: the output layout (``ReadSchema``) and line-chunk parsing with bad-line handling.

A row format parses a chunk of whole lines in bulk (one pyarrow call). Only when that fails does
it split the chunk in halves, recursively, until the bad lines are isolated (``O(bad * log n)``
bulk calls instead of one call per line); each bad line then follows ``mode``.
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector_base import MalformedRecordError
from connectors.files.formats.line_framing import CARRIAGE_RETURN, NEWLINE, LineFraming, line_bounds
from connectors.files.modified_time_filter import parse_timestamp
from connectors.files.options import FILE_COLUMN, OFFSET_COLUMN, FileSourceOptions, ParseMode
from connectors.files.partitions import partition_value, partition_values
from connectors.files.time_zone import read_time_zone

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
        return table_of(columns, self.output, n)


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


class Line(NamedTuple):
    """A line to parse: its start in the chunk, its text as UTF-8 (``None``: not of the charset),
    and its bytes as read."""

    offset: int
    text: bytes | None
    raw: bytes


class LineFormat(ABC):
    """A line-oriented format (one record per line); subclasses parse chunks in bulk."""

    name = "lines"
    skips_blank_lines = True
    """Whether blank lines hold no record (jsonl, csv) or an empty one (text)."""
    strict_values = False
    """Whether ``partial_row`` values are typed (JSON) rather than text to cast (csv); see ``fits``."""
    corrupt_text_undecoded = False
    """With ``encoding``: whether a line with bytes not of the charset is malformed and the
    corrupt-record column holds a line's bytes read as UTF-8 (Spark's json), rather than reading the
    line's text with U+FFFD for such bytes (csv)."""
    whole_file = False
    """Whether ``parse`` takes a whole file at once (``multiLine`` JSON documents), never a chunk."""

    def __init__(self, schema: ReadSchema, options: FileSourceOptions) -> None:
        self.schema = schema
        self.options = options
        self.mode = options.mode
        self.zone = read_time_zone(options.csv.time_zone)
        """Where timestamps without an offset are read (``time_zone.py``)."""
        self.framing = LineFraming.of(options)
        """Where lines end and how they decode (``lineSep``, ``encoding``)."""

    @abstractmethod
    def parse_bulk(self, data: bytes | memoryview, whole: bool) -> pa.Table:
        """Parse whole lines into a table of ``schema.data``; raise on any bad line.

        ``whole``: use one parse block for all of ``data`` (needed when a line may be very long).
        """

    def parse_readable(self, data: bytes, path: str) -> pa.Table:
        """A whole-file format (``whole_file``): the records of the part of a corrupt file that could
        be read (``ignoreCorruptFiles``); by default, as ``parse``."""
        return self.parse(data, 0, path, at_file_start=True)

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

    def partial_rows(self, line: bytes) -> list[dict[str, Any]]:
        """``PERMISSIVE``: the rows a malformed line still gives (one by default, a JSON line that is
        an array of objects one per object, as Spark); empty when nothing of the line can be read."""
        partial = self.partial_row(line)
        return [] if partial is None else [partial]

    def parse(self, data: bytes | memoryview, base_offset: int, path: str, at_file_start: bool) -> pa.Table:
        """Parse a chunk of whole lines that starts at ``base_offset`` into the output table."""
        if at_file_start:
            data, base_offset = self.file_start(data, base_offset)
        skip = self.drop_header(memoryview(data), at_file_start)
        if skip:
            data = memoryview(data)[skip:]
            base_offset += skip
        if len(data) == 0:
            return self.schema.output.empty_table()
        if self.framing.custom:
            return self._parse_framed(data, base_offset, path)
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

    def file_start(self, data: bytes | memoryview, base_offset: int) -> tuple[bytes | memoryview, int]:
        """The chunk that starts a file without what the reader drops there (a UTF-8 byte-order
        mark, as Hadoop's line reader), and the offset of what is left."""
        skip = bom_length(data)
        return memoryview(data)[skip:], base_offset + skip

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
        lines = [
            Line(s, raw[s:e], raw[s:e])
            for s, e in zip(starts.tolist(), ends.tolist(), strict=True)
            if not (self.skips_blank_lines and not raw[s:e].strip())
        ]
        return self._parse_lines(lines, base_offset, path)

    def _parse_framed(self, data: bytes | memoryview, base_offset: int, path: str) -> pa.Table:
        """Lines found and decoded by ``framing`` (``lineSep``, ``encoding``): each is parsed on its own
        terms, a line holding a ``\\n`` or ``\\r`` (part of it then) never in bulk with others."""
        lines: list[Line] = []
        strict = self.corrupt_text_undecoded  # json: bytes not of the charset make the line malformed
        for offset, raw in self.framing.lines(data):
            text = self.framing.to_utf8(raw, strict)
            if self.skips_blank_lines and text is not None and not text.strip():
                continue
            lines.append(Line(offset, text, raw))
        return self._parse_lines(lines, base_offset, path)

    def _parse_lines(self, lines: list[Line], base_offset: int, path: str) -> pa.Table:
        """Parse ``lines`` in bulk where possible, halving the runs that fail until the bad lines are
        isolated; each bad line follows ``mode``."""
        alone = [line.text is None or b"\n" in line.text or b"\r" in line.text for line in lines]
        alone_before = np.concatenate((np.zeros(1, np.int64), np.cumsum(alone, dtype=np.int64)))
        pieces: list[pa.Table] = []
        offsets: list[int] = []
        corrupt: list[str | None] = []

        def solve(lo: int, hi: int) -> None:
            error: Exception | None = None
            if alone_before[hi] > alone_before[lo]:  # a line with a line break, or undecodable
                error = ValueError(
                    "bytes that are not " + self.framing.charset
                    if hi - lo == 1 and lines[lo].text is None
                    else "a line break inside the line"
                )
            else:
                chunk = b"\n".join(line.text or b"" for line in lines[lo:hi]) + b"\n"
                try:
                    table = self.parse_bulk(chunk, whole=True)
                    if table.num_rows != hi - lo:
                        error = ValueError(f"{table.num_rows} records in one line")
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as e:
                    error = e
            if error is None:
                pieces.append(table)
                offsets.extend(line.offset for line in lines[lo:hi])
                corrupt.extend([None] * (hi - lo))
                return
            if hi - lo > 1:
                mid = (lo + hi) // 2
                solve(lo, mid)
                solve(mid, hi)
                return
            offset, text, raw = lines[lo]
            recovered = None if text is None else self.recover_line(text)
            if recovered is not None:  # one row, or none or several (a JSON array of objects)
                pieces.append(recovered)
                offsets.extend([offset] * recovered.num_rows)
                corrupt.extend([None] * recovered.num_rows)
                return
            self._bad_line(path, base_offset + offset, raw if text is None else text, error)
            if self.mode is ParseMode.PERMISSIVE:
                partials = [] if text is None else self.partial_rows(text)
                if not partials:
                    pieces.append(_null_table(self.schema.data, 1))
                for partial in partials:
                    pieces.append(partial_table(self.schema.data, partial, self.strict_values, self.zone))
                offsets.extend([offset] * max(1, len(partials)))
                shown = raw if self.corrupt_text_undecoded or text is None else text
                corrupt.extend([shown.decode("utf-8", "replace")] * max(1, len(partials)))

        if lines:
            solve(0, len(lines))
        if not pieces:
            return self.schema.output.empty_table()
        data_table = concat_rows([p.select(self.schema.data.names) for p in pieces], self.schema.data)
        corrupt_col = pa.array(corrupt, pa.string()) if self.schema.corrupt else None
        return self.schema.assemble(
            data_table, path, np.asarray(offsets, np.int64) + base_offset, corrupt_col
        )

    def _bad_line(self, path: str, offset: int, line: bytes, error: Exception) -> None:
        if self.mode is ParseMode.FAILFAST:
            raise malformed_error(
                f"{self.name} record",
                f"{path} at byte offset {offset}",
                error,
                line,
                "set option mode to DROPMALFORMED to skip such lines or PERMISSIVE to keep them in a "
                "corrupt-record column",
            ) from None


def malformed_error(
    what: str, where: str, error: object, head: bytes, advice: str, whole_file: bool = False
) -> MalformedRecordError:
    """``FAILFAST``'s error: a malformed ``what`` (``"jsonl record"``) in file ``where`` (its path,
    and the byte offset of a line), why, how it starts (the first 200 bytes of the line, or of the
    file when ``whole_file``) and what to do instead."""
    preview = head[:200].decode("utf-8", "replace")
    start = "the file" if whole_file else "line"
    return MalformedRecordError(
        f"malformed {what} in file {where}: {error} ({start} starts with {preview!r}); {advice}"
    )


def fits(value: Any, t: pa.DataType, strict: bool = False, zone: str = "UTC") -> Any:
    """``value`` when it converts to ``t``, else ``None``. Strings are cast (csv fields are text);
    ``strict`` (JSON values, as Spark's JSON parser takes them): a string only for a string, date or
    timestamp column, a fraction never for an integer column, a boolean only for a boolean one.
    A timestamp without an offset is read in ``zone``."""
    if value is None:
        return None
    if strict and not _json_fits(value, t):
        return None
    if pa.types.is_decimal(t) and not isinstance(value, bool):
        return _decimal(value, t)
    if _holds_decimal(t):  # pyarrow converts no float to a decimal inside a list or a struct
        return _nested(value, t, strict, zone)
    if isinstance(value, str) and pa.types.is_timestamp(t) and t.tz is not None:
        return _timestamp(value, t, zone)
    if isinstance(value, str) and not strict and (pa.types.is_integer(t) or pa.types.is_floating(t)):
        return _java_number(value, t)
    try:
        if isinstance(value, str) and not pa.types.is_string(t):
            return pa.scalar(value, pa.string()).cast(t).as_py()
        return pa.scalar(value, t).as_py()
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None


_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")
_JAVA_DOUBLE = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?")
_JAVA_HEX_DOUBLE = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?"
)
_SPARK_SPECIAL_DOUBLES = {"NaN": math.nan, "Inf": math.inf, "-Inf": -math.inf}
"""Spark's csv ``nanValue``, ``positiveInf``, ``negativeInf`` defaults."""


def _java_number(value: str, t: pa.DataType) -> Any:
    """A csv field as Spark's parser reads a number: an integer as Java's ``Integer.parseInt`` (a
    ``+`` sign, no blanks), a double as ``Double.parseDouble`` (blanks trimmed, ``NaN``,
    ``Infinity``, a ``d`` / ``f`` suffix, hexadecimal) or ``NaN`` / ``Inf`` / ``-Inf``."""
    if pa.types.is_integer(t):
        if not _JAVA_INTEGER.fullmatch(value):
            return None
        try:
            return pa.scalar(int(value), t).as_py()
        except (pa.ArrowException, OverflowError):
            return None
    if value in _SPARK_SPECIAL_DOUBLES:
        number = _SPARK_SPECIAL_DOUBLES[value]
    else:
        text = value.strip("".join(chr(c) for c in range(33)))
        if _JAVA_DOUBLE.fullmatch(text):
            number = float(text.rstrip("fFdD"))
        elif _JAVA_HEX_DOUBLE.fullmatch(text):
            number = float.fromhex(text.rstrip("fFdD"))
        else:
            return None
    try:
        return pa.scalar(number, t).as_py()
    except (pa.ArrowException, OverflowError):
        return None


def _holds_decimal(t: pa.DataType) -> bool:
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.types.is_decimal(t.value_type) or _holds_decimal(t.value_type)
    if pa.types.is_struct(t):
        return any(pa.types.is_decimal(f.type) or _holds_decimal(f.type) for f in t)
    return False


def _nested(value: Any, t: pa.DataType, strict: bool, zone: str) -> Any:
    """A list or struct value holding decimals, each part by ``fits``; ``None`` when a part does
    not fit."""
    if pa.types.is_struct(t):
        if not isinstance(value, dict):
            return None
        out = {f.name: fits(value.get(f.name), f.type, strict, zone) for f in t}
        return None if any(out[f.name] is None and value.get(f.name) is not None for f in t) else out
    if not isinstance(value, list):
        return None
    items = [fits(v, t.value_type, strict, zone) for v in value]
    return None if any(i is None and v is not None for i, v in zip(items, value, strict=True)) else items


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


def _timestamp(value: str, t: pa.DataType, zone: str) -> Any:
    """Text with an offset, or without one read in ``zone`` (as the bulk parsers read it)."""
    try:
        return pa.scalar(value, pa.string()).cast(t).as_py()
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        pass
    try:
        naive = pa.array([value], pa.string()).cast(pa.timestamp(t.unit))
        return in_zone(naive, zone).cast(t)[0].as_py()
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        pass
    try:  # Spark's other timestamp forms (``2024-1-1``, ``2024-01-01 10:00``, a zone name)
        micros = parse_timestamp(value, zone)
        return pa.scalar(micros, pa.timestamp("us", "UTC")).cast(t).as_py()
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None


_WITH_OFFSET = r"\d\d:\d\d(:\d\d(\.\d*)?)?(Z|[+-]\d\d(:?\d\d)?)$"


def zoned_text(text: pa.ChunkedArray, t: pa.DataType, zone: str) -> pa.ChunkedArray:
    """Timestamp text as ``t``: with an offset as written, without one in ``zone``; raises when a
    value is no timestamp (the line then takes the line-by-line path)."""
    offset = pc.match_substring_regex(text, _WITH_OFFSET)
    unit = t.unit
    naive = in_zone(pc.if_else(offset, None, text).cast(pa.timestamp(unit)), zone)
    aware = pc.if_else(offset, text, None).cast(pa.timestamp(unit, "UTC"))
    return pc.if_else(offset, aware, naive).cast(t)


def in_zone(naive: pa.Array | pa.ChunkedArray, zone: str) -> pa.Array | pa.ChunkedArray:
    """Naive timestamps read as wall-clock times in ``zone``, as UTC instants. A time a clock shows
    twice (autumn) is the earlier instant, as in Spark; one it skips (spring) the first after."""
    if zone in ("UTC", "Z", "+00:00"):
        return naive.cast(pa.timestamp(naive.type.unit, "UTC"))
    return pc.assume_timezone(naive, zone, ambiguous="earliest", nonexistent="latest").cast(
        pa.timestamp(naive.type.unit, "UTC")
    )


def _json_fits(value: Any, t: pa.DataType) -> bool:
    if isinstance(value, dict):  # an object fits a struct whose fields fit, at any depth, or a map
        if pa.types.is_struct(t):
            return all(value.get(f.name) is None or _json_fits(value[f.name], f.type) for f in t)
        return bool(pa.types.is_map(t))
    if isinstance(value, list):  # pyarrow would take a string for a list of its characters
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            return all(v is None or _json_fits(v, t.value_type) for v in value)
        return False
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


def _partial(value: Any, t: pa.DataType, strict: bool, zone: str) -> Any:
    """What Spark keeps of a value in a malformed JSON line: an object's fields that fit, at any
    depth (``{"a": 2, "b": "x"}`` into ``STRUCT<a INT, b ARRAY<STRING>>`` is ``(2, null)``)."""
    if strict and isinstance(value, dict) and pa.types.is_struct(t):
        return {f.name: _partial(value.get(f.name), f.type, strict, zone) for f in t}
    return fits(value, t, strict, zone)


def partial_table(schema: pa.Schema, row: dict[str, Any], strict: bool, zone: str) -> pa.Table:
    """One row of ``schema`` holding the values of ``row`` that fit their columns (the others null)."""
    columns = [pa.array([_partial(row.get(f.name), f.type, strict, zone)], f.type) for f in schema]
    return table_of(columns, schema, 1)


def _null_table(schema: pa.Schema, n: int) -> pa.Table:
    return table_of([pa.nulls(n, f.type) for f in schema], schema, n)


def table_of(columns: Sequence[pa.Array | pa.ChunkedArray], schema: pa.Schema, num_rows: int) -> pa.Table:
    """``pa.Table.from_arrays``, except that a schema of no columns still gives ``num_rows`` rows:
    a record holding none of the schema's fields is a row, as in Spark (``{}`` read without a data
    column is one row), where Arrow would make the table empty."""
    if len(schema):
        return pa.Table.from_arrays(list(columns), schema=schema)
    return pa.table({"rows": pa.nulls(num_rows)}).select([])  # no metadata: setting it drops the rows


def concat_rows(tables: Sequence[pa.Table], schema: pa.Schema) -> pa.Table:
    """``tables`` (of ``schema``'s columns, cast to its types) one after the other; rows kept when
    ``schema`` has no columns (``pa.concat_tables`` and ``cast`` drop them)."""
    if len(schema):
        return pa.concat_tables([t.cast(schema) for t in tables])
    return table_of([], schema, sum(t.num_rows for t in tables))
