"""``csv``: Spark's CSV options (``header``, ``sep``, ``quote``, ``escape``, ``nullValue``), via pyarrow."""

from __future__ import annotations

import csv as pycsv
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pc
from typing_extensions import override

from connectors.files.formats.base import LineFormat, check_utf8, count_lines, fits, line_bounds

BLOCK_BYTES = 4 * 1024 * 1024
TRUE_VALUES = ["true", "True", "TRUE"]
FALSE_VALUES = ["false", "False", "FALSE"]


def _parse_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(t) and t.tz is not None:
        return pa.timestamp(t.unit)  # naive text is read as UTC, then the zone is attached
    return t


class CsvFormat(LineFormat):
    """Columns are taken by position (Spark's ``enforceSchema``); another column count is malformed."""

    name = "csv"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        csv = self.options.csv
        data = self.schema.data
        self._names = data.names
        self._types = {f.name: _parse_type(f.type) for f in data}
        self._needs_cast = any(self._types[f.name] != f.type for f in data)
        self._parse_options = pc.ParseOptions(
            delimiter=csv.sep,
            quote_char=csv.quote if csv.quote else False,
            escape_char=csv.escape if csv.escape else False,
            double_quote=True,
            newlines_in_values=False,
            ignore_empty_lines=True,
        )
        self._convert_options = pc.ConvertOptions(
            column_types=self._types,
            null_values=[csv.null_value],
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,  # Spark: a field equal to nullValue is null, quoted or not
            true_values=TRUE_VALUES,
            false_values=FALSE_VALUES,
        )

    @override
    def drop_header(self, data: bytes | memoryview, at_file_start: bool) -> int:
        if not (at_file_start and self.options.csv.header):
            return 0
        starts, ends = line_bounds(data)
        for i, (s, e) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
            if bytes(data[s:e]).strip():  # the header is the first line that is not blank, as Spark's
                return int(starts[i + 1]) if i + 1 < len(starts) else len(data)
        return len(data)

    def _odd_quotes(self, data: bytes | memoryview) -> bool:
        """Whether a line has an odd number of quote characters: a quoted value that does not end
        on its line (Spark's ``multiLine=false`` reads every line on its own)."""
        quote = self.options.csv.quote
        if not quote:
            return False
        buf = np.frombuffer(data, np.uint8)
        at = np.flatnonzero(buf == ord(quote))
        if not len(at):
            return False
        starts, _ends = line_bounds(data)
        per_line = np.bincount(np.searchsorted(starts, at, side="right") - 1, minlength=len(starts))
        return bool((per_line % 2).any())

    def _one_line(self, data: bytes | memoryview) -> pa.Table:
        """A line with an unbalanced quote, split as Spark's parser splits it (the open quoted value
        runs to the end of the line); another number of fields than the schema is malformed."""
        starts, ends = line_bounds(data)
        line = bytes(data[int(starts[0]) : int(ends[0])]) if len(starts) else b""
        tokens = self._tokens(line) if len(starts) else None
        quote, sep = self.options.csv.quote, self.options.csv.sep
        if tokens and quote and (line == quote.encode() or line.endswith((sep + quote).encode())):
            tokens[-1] = quote  # a quote opened at the very end of the line is the value, as Spark's
        if tokens is None or len(tokens) != len(self._names):
            raise ValueError(f"a line with an unbalanced quote and not {len(self._names)} fields")
        columns = []
        for f, value in zip(self.schema.data, tokens, strict=True):
            converted = fits(value, f.type)
            if value is not None and converted is None:
                raise ValueError(f"{value!r} is not a {f.type}")
            columns.append(pa.array([converted], f.type))
        return pa.Table.from_arrays(columns, schema=self.schema.data)

    @override
    def parse_bulk(self, data: bytes | memoryview, whole: bool) -> pa.Table:
        try:
            check_utf8(data)
        except ValueError:  # Spark decodes csv lines with U+FFFD for invalid bytes; so does this source
            data = bytes(data).decode("utf-8", "replace").encode("utf-8")
        if self._odd_quotes(data):
            if count_lines(data) > 1:
                raise ValueError("a quoted value does not end on its line")
            return self._one_line(data)
        block = max(BLOCK_BYTES, len(data) + 1) if whole else BLOCK_BYTES
        table = pc.read_csv(
            pa.BufferReader(pa.py_buffer(data)),
            read_options=pc.ReadOptions(
                column_names=self._names, autogenerate_column_names=False, use_threads=True, block_size=block
            ),
            parse_options=self._parse_options,
            convert_options=self._convert_options,
        )
        if self._needs_cast:
            table = table.cast(pa.schema([pa.field(f.name, f.type, True) for f in self.schema.data]))
        return table

    def _tokens(self, line: bytes) -> list[str | None] | None:
        """The fields of one line (the null value as ``None``), or ``None`` when it is not CSV."""
        dialect = self.options.csv
        reader = pycsv.reader(
            [line.decode("utf-8", "replace")],
            delimiter=dialect.sep,
            quotechar=dialect.quote or '"',
            escapechar=dialect.escape,
            quoting=pycsv.QUOTE_MINIMAL if dialect.quote else pycsv.QUOTE_NONE,
            doublequote=True,
        )
        try:
            tokens = next(reader, [])
        except pycsv.Error:
            return None
        return [None if t == dialect.null_value else t for t in tokens]

    @override
    def recover_line(self, line: bytes) -> pa.Table | None:
        """A line whose every field converts the way Spark's CSV parser converts it, where pyarrow's
        does not (a decimal as ``1e2`` or with more fraction digits than the scale, rounded half up)."""
        tokens = self._tokens(line)
        data = self.schema.data
        if tokens is None or len(tokens) != len(data):
            return None
        values = [fits(tok, f.type) for tok, f in zip(tokens, data, strict=True)]
        if any(v is None and tok is not None for v, tok in zip(values, tokens, strict=True)):
            return None
        return pa.Table.from_arrays(
            [pa.array([v], f.type) for v, f in zip(values, data, strict=True)], schema=data
        )

    @override
    def partial_row(self, line: bytes) -> dict[str, Any] | None:
        tokens = self._tokens(line)
        return None if tokens is None else dict(zip(self._names, tokens, strict=False))
