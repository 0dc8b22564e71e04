"""``jsonl``: one JSON object per line, parsed in bulk by ``pyarrow.json`` against the read schema."""

from __future__ import annotations

import json
import re
from json.decoder import scanstring
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.json as pj
from typing_extensions import override

from connectors.files.formats.base import (
    CARRIAGE_RETURN,
    NEWLINE,
    UTF8_BOM,
    LineFormat,
    check_utf8,
    concat_rows,
    fits,
    malformed_error,
    partial_table,
    table_of,
    zoned_text,
)
from connectors.files.formats.json_lenient import NON_NUMERIC_BYTES, Leniency, Written, parse_leniently
from connectors.files.formats.line_framing import UTF8, LineFraming
from connectors.files.options import ParseMode

DOCUMENT = "JSON document (multiLine=true)"
"""What a ``multiLine`` file holds (in errors)."""
BLOCK_BYTES = 4 * 1024 * 1024
"""Parse block size: blocks are parsed in parallel; a longer line is retried with one block."""


def _parse_type(t: pa.DataType) -> pa.DataType:
    """The type pyarrow's JSON reader can produce for ``t`` (cast to ``t`` afterwards)."""
    if pa.types.is_date(t) or pa.types.is_decimal(t):
        return pa.string()
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _parse_type(f.type), f.nullable) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(pa.field(t.value_field.name, _parse_type(t.value_type), t.value_field.nullable))
    return t


_OPEN_BRACE = ord("{")
_AFTER_OBJECT = re.compile(rb"\}[ \t]*[^ \t\r\n,\]\}]")
"""A ``}`` followed (on its line) by what cannot follow an object's end inside a value: maybe a
second value after the line's first (pyarrow would read both; Spark reads the first), or a ``}`` in
a string; such chunks take the line-by-line path, which reads the first value of each line."""
_BLANKS = b" \t"


def check_objects(data: bytes | memoryview) -> None:
    """Raise ``ValueError`` unless every non-blank line starts with ``{`` (after spaces and tabs) and
    no line may hold a second value after its object.

    Only such lines can be parsed in bulk (others are malformed, or arrays of objects that the
    line-by-line path reads), and pyarrow's JSON reader crashes the process on a block that starts
    with a ``null`` line (pyarrow 26), so those must never reach it.
    """
    buf = np.frombuffer(data, np.uint8)
    if not len(buf):
        return
    ends = (buf == NEWLINE) | (buf == CARRIAGE_RETURN)
    starts = np.flatnonzero(ends[:-1]) + 1
    starts = np.concatenate((np.zeros(1, np.int64), starts))
    first = buf[starts]
    odd = starts[(first != _OPEN_BRACE) & (first != NEWLINE) & (first != CARRIAGE_RETURN)]
    if _AFTER_OBJECT.search(data):
        raise ValueError("a line may hold more than one JSON value (only its first one counts)")
    raw = bytes(data) if len(odd) else b""
    for at in odd.tolist():
        head = raw[at : at + 4096].lstrip(_BLANKS)[:1]
        if head not in (b"{", b"\n", b"\r"):
            raise ValueError(f"a line at byte {at} is not a JSON object")


class JsonLinesFormat(LineFormat):
    """Fields not in the schema are ignored, missing ones are null; a line that does not fit is malformed."""

    name = "jsonl"
    strict_values = True
    corrupt_text_undecoded = True

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        data = self.schema.data
        # outside UTC, top-level timestamps are parsed as text (pyarrow reads a naive one as UTC and
        # keeps no trace of which had an offset), then those without an offset read in the zone
        self._zoned = {
            f.name
            for f in data
            if self.zone not in ("UTC", "Z", "+00:00")
            and pa.types.is_timestamp(f.type)
            and f.type.tz is not None
        }
        self._parse_schema = pa.schema(
            [
                pa.field(f.name, pa.string() if f.name in self._zoned else _parse_type(f.type), True)
                for f in data
            ]
        )
        self._needs_cast = not self._parse_schema.equals(data)
        self._parse_options = pj.ParseOptions(
            explicit_schema=self._parse_schema, unexpected_field_behavior="ignore", newlines_in_values=False
        )

    @override
    def parse_bulk(self, data: bytes | memoryview, whole: bool) -> pa.Table:
        if not self.schema.data.names:
            raise ValueError("no data columns to parse")
        check_utf8(data)
        check_objects(data)
        if not self.options.json_leniency.non_numeric and NON_NUMERIC_BYTES.search(data):
            raise ValueError("NaN or Infinity may stand as a number (allowNonNumericNumbers=false)")
        block = max(BLOCK_BYTES, len(data) + 1) if whole else BLOCK_BYTES
        table = pj.read_json(
            pa.BufferReader(pa.py_buffer(data)),
            read_options=pj.ReadOptions(use_threads=True, block_size=block),
            parse_options=self._parse_options,
        )
        if self._zoned:
            table = pa.Table.from_arrays(
                [
                    zoned_text(c, self.schema.data.field(n).type, self.zone) if n in self._zoned else c
                    for n, c in zip(table.column_names, table.columns, strict=True)
                ],
                names=table.column_names,
            )
        if self._needs_cast or self._zoned:
            table = table.cast(pa.schema([pa.field(f.name, f.type, True) for f in self.schema.data]))
        return table

    @override
    def recover_line(self, line: bytes) -> pa.Table | None:
        """What Spark's parser reads from a line pyarrow rejects: a value that is not a string in a
        string column, at any depth, is its JSON text as written in the line (``1e2`` stays
        ``1e2``, ``[1, 2]`` keeps its spaces), and a top-level array of objects is one record per
        object."""
        try:  # what follows the line's first value is ignored, as by Spark's parser
            records = self._line_records(line)
        except (ValueError, StopIteration, IndexError, RecursionError):
            return None
        return None if records is None else self._table(records)

    def _line_records(self, line: bytes) -> list[dict[str, Any]] | None:
        """``_records`` of a line (``allowSingleQuotes``: its single-quoted strings too)."""
        return parse_leniently(
            lambda text, written: _records(text, self.schema.data, rest_ok=True, written=written),
            line.decode("utf-8"),
            self.options.json_leniency,
        )

    def _table(self, records: list[dict[str, Any]]) -> pa.Table | None:
        """``records`` as rows of ``schema.data``, or ``None`` when a value does not fit its column."""
        columns: list[list[Any]] = [[] for _f in self.schema.data]
        for record in records:
            for i, f in enumerate(self.schema.data):
                read = record.get(f.name)
                converted = fits(read, f.type, strict=True, zone=self.zone)
                if read is not None and converted is None:
                    return None
                columns[i].append(converted)
        arrays = [pa.array(c, f.type) for c, f in zip(columns, self.schema.data, strict=True)]
        return table_of(arrays, self.schema.data, len(records))

    @override
    def partial_rows(self, line: bytes) -> list[dict[str, Any]]:
        """The records of the line with every value as read (a non-string one in a string column
        as its text), each then kept where it fits its column."""
        try:
            return self._line_records(line) or []
        except (ValueError, StopIteration, IndexError, RecursionError):
            return []


class JsonDocumentFormat(JsonLinesFormat):
    """``multiLine=true``: a file is one JSON document, an object (one record) or an array of objects
    (one record each), as Spark's json source reads it.

    As Spark (Jackson reads one value and stops), what follows the document is ignored, and an
    empty or blank file holds no record. A malformed document (not JSON, not an object nor an array
    of objects, invalid UTF-8, a value that does not fit its column) follows ``mode``:
    ``PERMISSIVE`` keeps the values that fit (one partial row per object, or one row of nulls) with
    the whole file's text, byte-order mark and what follows included, in the corrupt-record column;
    ``DROPMALFORMED`` drops the file's records; ``FAILFAST`` fails naming the file.
    """

    name = "json document"
    whole_file = True

    @override
    def parse_readable(self, data: bytes, path: str) -> pa.Table:
        """As Spark (Jackson stops after the document): the document's records when it ends before
        the error, else nothing (the read failed inside it: the file is skipped, whatever ``mode``)."""
        utf8 = document_utf8(data, self.framing)
        body = utf8[len(UTF8_BOM) :] if utf8.startswith(UTF8_BOM) else utf8
        try:
            records = document_records(body, self.schema.data, self.options.json_leniency)
        except (ValueError, StopIteration, IndexError, RecursionError):
            records = None
        if records is None:
            return self.schema.output.empty_table()
        return self.parse(data, 0, path, at_file_start=True)

    @override
    def parse(self, data: bytes | memoryview, base_offset: int, path: str, at_file_start: bool) -> pa.Table:
        raw = document_utf8(bytes(data), self.framing)
        body = raw[len(UTF8_BOM) :] if raw.startswith(UTF8_BOM) else raw
        try:
            if raw == UTF8_BOM:  # Spark: malformed (unlike a mark followed by blanks, which is blank)
                raise ValueError("a byte-order mark and nothing else")
            records = document_records(body, self.schema.data, self.options.json_leniency)
            error = "not an object nor an array of objects"
        except (ValueError, StopIteration, IndexError, RecursionError) as e:
            records, error = None, str(e) or type(e).__name__
        if records == []:
            return self.schema.output.empty_table()
        table = None if records is None else self._table(records)
        if table is None and records is not None:
            error = "a value does not fit its column's type"
        if table is not None:
            return self.schema.assemble(table, path, np.zeros(table.num_rows, np.int64))
        if self.mode is ParseMode.FAILFAST:
            raise malformed_error(
                DOCUMENT,
                path,
                error,
                raw,
                "set option mode to DROPMALFORMED to skip such files or PERMISSIVE to keep them in a "
                "corrupt-record column",
                whole_file=True,
            )
        if self.mode is ParseMode.DROPMALFORMED:
            return self.schema.output.empty_table()
        partials = records or [{}]
        rows = concat_rows(
            [partial_table(self.schema.data, p, strict=True, zone=self.zone) for p in partials],
            self.schema.data,
        )
        text = bytes(data).decode("utf-8", "replace")  # as Spark: the file's bytes, not decoded by charset
        corrupt = pa.array([text] * rows.num_rows, pa.string()) if self.schema.corrupt else None
        return self.schema.assemble(rows, path, np.zeros(rows.num_rows, np.int64), corrupt)


_JSON_SPACE = " \t\n\r"


def document_utf8(data: bytes, framing: LineFraming) -> bytes:
    """A ``multiLine`` file's bytes as UTF-8 when ``encoding`` names another charset (as read, when
    they are not of it: the document is then malformed)."""
    if framing.charset == UTF8:
        return data
    try:
        return framing.decode(data).encode(UTF8, "surrogatepass")
    except UnicodeDecodeError:
        return data


def document_text(body: bytes) -> str | None:
    """The text of a JSON document's bytes (without a byte-order mark), up to an invalid UTF-8 byte
    (what follows the document is never read, as by Jackson); ``None`` when blank."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        text = body[: e.start].decode("utf-8")
        if not text.strip(_JSON_SPACE):
            raise ValueError(f"invalid UTF-8 at byte {e.start}") from None
        return text
    return text if text.strip(_JSON_SPACE) else None


def document_records(body: bytes, schema: pa.Schema, lenient: Leniency) -> list[dict[str, Any]] | None:
    """The records of the first JSON value of ``body`` as ``_records`` reads a line; ``[]`` for a
    blank file; raises ``ValueError`` when the value is cut short (or cut by invalid UTF-8).
    ``lenient``: the ``allow...`` options."""
    text = document_text(body)
    if text is None:
        return []
    return parse_leniently(
        lambda t, written: _records(t, schema, rest_ok=True, written=written), text, lenient
    )


_scan = json.JSONDecoder().scan_once
"""One JSON value at an index: ``(value, end)``; ``StopIteration`` when there is none."""
_SPACE = re.compile(r"[ \t\n\r]*")


def _skip(s: str, i: int) -> int:
    return _SPACE.match(s, i).end()  # type: ignore[union-attr]


def _records(
    s: str, schema: pa.Schema, rest_ok: bool = False, written: Written | None = None
) -> list[dict[str, Any]] | None:
    """The records of a JSON line (an object, or an array of objects) with the columns of
    ``schema`` as Spark reads them, or ``None`` when the line is no such thing (``rest_ok``: what
    follows the value is ignored, as in a ``multiLine`` document).

    Python's ``json`` module gives values, not their text; Spark's parser hands a non-string value
    in a string column over as the text it was written with. So the objects are walked here (the
    values themselves are still decoded by ``json``'s scanner) to keep that text (``written``: the
    text as written of a slice of ``s``, when ``s`` is a line normalized, see json_lenient.py).
    """
    text = written or (lambda start, end: s[start:end])
    i = _skip(s, 0)
    if s[i : i + 1] == "{":
        record, i = _object(s, i, schema, text)
        records = [record]
    elif s[i : i + 1] == "[":
        records = []
        i = _skip(s, i + 1)
        while s[i : i + 1] != "]":
            if s[i : i + 1] != "{":
                return None
            record, i = _object(s, i, schema, text)
            records.append(record)
            i = _skip(s, i)
            if s[i : i + 1] == ",":
                i = _skip(s, i + 1)
            elif s[i : i + 1] != "]":
                return None
        i += 1
    else:
        return None
    return records if rest_ok or _skip(s, i) == len(s) else None


def _object(s: str, i: int, fields: Any, written: Written) -> tuple[dict[str, Any], int]:
    types = {f.name: f.type for f in fields}
    out: dict[str, Any] = {}
    i = _skip(s, i + 1)
    if s[i : i + 1] == "}":
        return out, i + 1
    while True:
        if s[i : i + 1] != '"':
            raise ValueError("a key expected")
        key, i = scanstring(s, i + 1)
        i = _skip(s, i)
        if s[i : i + 1] != ":":
            raise ValueError("':' expected")
        i = _skip(s, i + 1)
        t = types.get(key)
        if t is None:
            _ignored, i = _scan(s, i)
        else:
            out[key], i = _value(s, i, t, written)
        closed, i = _next_item(s, i, "}")
        if closed:
            return out, i


def _value(s: str, i: int, t: pa.DataType, written: Written) -> tuple[Any, int]:
    """The value at ``s[i]`` as Spark reads it into ``t``: under a string type, a value that is not
    a JSON string is its text as written."""
    c = s[i : i + 1]
    if (pa.types.is_string(t) or pa.types.is_large_string(t)) and c != '"':
        value, end = _scan(s, i)
        return (None if value is None else written(i, end)), end
    if pa.types.is_struct(t) and c == "{":
        return _object(s, i, t, written)
    if (pa.types.is_list(t) or pa.types.is_large_list(t)) and c == "[":
        items: list[Any] = []
        i = _skip(s, i + 1)
        if s[i : i + 1] == "]":
            return items, i + 1
        while True:
            item, i = _value(s, i, t.value_type, written)
            items.append(item)
            closed, i = _next_item(s, i, "]")
            if closed:
                return items, i
    return _scan(s, i)


def _next_item(s: str, i: int, close: str) -> tuple[bool, int]:
    """After an item: ``(True, after the closing bracket)`` or ``(False, at the next item)``."""
    i = _skip(s, i)
    if s[i : i + 1] == ",":
        return False, _skip(s, i + 1)
    if s[i : i + 1] == close:
        return True, i + 1
    raise ValueError(f"',' or {close!r} expected")
