"""``jsonl``: one JSON object per line, parsed in bulk by ``pyarrow.json`` against the read schema."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pyarrow.json as pj
from typing_extensions import override

from connectors.files.formats.base import LineFormat, check_utf8, fits

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


class JsonLinesFormat(LineFormat):
    """Fields not in the schema are ignored, missing ones are null; a line that does not fit is malformed."""

    name = "jsonl"
    strict_values = True

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        data = self.schema.data
        self._parse_schema = pa.schema([pa.field(f.name, _parse_type(f.type), True) for f in data])
        self._needs_cast = not self._parse_schema.equals(data)
        self._parse_options = pj.ParseOptions(
            explicit_schema=self._parse_schema, unexpected_field_behavior="ignore", newlines_in_values=False
        )

    @override
    def parse_bulk(self, data: bytes | memoryview, whole: bool) -> pa.Table:
        if not self.schema.data.names:
            raise ValueError("no data columns to parse")
        check_utf8(data)
        block = max(BLOCK_BYTES, len(data) + 1) if whole else BLOCK_BYTES
        table = pj.read_json(
            pa.BufferReader(pa.py_buffer(data)),
            read_options=pj.ReadOptions(use_threads=True, block_size=block),
            parse_options=self._parse_options,
        )
        if self._needs_cast:
            table = table.cast(pa.schema([pa.field(f.name, f.type, True) for f in self.schema.data]))
        return table

    @override
    def recover_line(self, line: bytes) -> pa.Table | None:
        """A value that is not a string in a string column is its JSON text, as Spark's parser
        reads it (``{"id": 11}`` into ``id string`` is ``"11"``); pyarrow rejects such a line."""
        record = self.partial_row(line)
        if record is None:
            return None
        columns = []
        for f in self.schema.data:
            value = record.get(f.name)
            if value is not None and not isinstance(value, str) and pa.types.is_string(f.type):
                value = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
            converted = fits(value, f.type, strict=True)
            if value is not None and converted is None:
                return None
            columns.append(pa.array([converted], f.type))
        return pa.Table.from_arrays(columns, schema=self.schema.data)

    @override
    def partial_row(self, line: bytes) -> dict[str, Any] | None:
        try:
            value = json.loads(line.decode("utf-8"))
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
