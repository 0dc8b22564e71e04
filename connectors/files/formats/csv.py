"""``csv``: Spark's CSV options (``header``, ``sep``, ``quote``, ``escape``, ``nullValue``), via pyarrow."""

from __future__ import annotations

import csv as pycsv
from typing import Any

import pyarrow as pa
import pyarrow.csv as pc
from typing_extensions import override

from connectors.files.formats.base import NEWLINE, LineFormat

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
            quoted_strings_can_be_null=False,
            true_values=TRUE_VALUES,
            false_values=FALSE_VALUES,
        )

    @override
    def drop_header(self, data: bytes | memoryview, at_file_start: bool) -> int:
        if not (at_file_start and self.options.csv.header):
            return 0
        raw = memoryview(data)
        for i in range(len(raw)):  # the header is short: scan it in Python
            if raw[i] == NEWLINE:
                return i + 1
        return len(raw)

    @override
    def parse_bulk(self, data: bytes | memoryview, whole: bool) -> pa.Table:
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

    def partial_row(self, line: bytes) -> dict[str, Any] | None:  # noqa: D102
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
        return {
            name: (None if token == dialect.null_value else token)
            for name, token in zip(self._names, tokens, strict=False)
        }
