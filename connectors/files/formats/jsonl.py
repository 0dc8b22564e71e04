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
        """What Spark's parser reads from a line pyarrow rejects: a value that is not a string in a
        string column, at any depth, is its JSON text (``{"id": 11}`` into ``id string`` is
        ``"11"``), and a top-level array of objects is one record per object."""
        try:
            value = json.loads(line.decode("utf-8"))
        except ValueError:
            return None
        records = value if isinstance(value, list) else [value]
        if not all(isinstance(r, dict) for r in records):
            return None
        columns: list[list[Any]] = [[] for _f in self.schema.data]
        for record in records:
            for i, f in enumerate(self.schema.data):
                read = _as_spark_reads(record.get(f.name), f.type)
                converted = fits(read, f.type, strict=True)
                if read is not None and converted is None:
                    return None
                columns[i].append(converted)
        arrays = [pa.array(c, f.type) for c, f in zip(columns, self.schema.data, strict=True)]
        return pa.Table.from_arrays(arrays, schema=self.schema.data)

    @override
    def partial_row(self, line: bytes) -> dict[str, Any] | None:
        try:
            value = json.loads(line.decode("utf-8"))
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


def _as_spark_reads(value: Any, t: pa.DataType) -> Any:
    """``value`` with every non-string under a string type turned into its JSON text."""
    if value is None:
        return None
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        if isinstance(value, str):
            return value
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if pa.types.is_struct(t) and isinstance(value, dict):
        return {f.name: _as_spark_reads(value.get(f.name), f.type) for f in t}
    if (pa.types.is_list(t) or pa.types.is_large_list(t)) and isinstance(value, list):
        return [_as_spark_reads(v, t.value_type) for v in value]
    return value
