"""``JsonEncoder``: a column of rows -> JSON payloads (Confluent wire format with a schema id).

The sink's side of ``json-confluent`` / ``json``: each non-null value becomes the JSON text of the
row (maps as objects, timestamps and dates in ISO 8601, decimals as numbers), after the 5-byte
header when the schema has a registry id. Records are not validated against the JSON Schema.

Threading: one encoder per writer task.
"""

from __future__ import annotations

import datetime
import decimal
import json
import struct
from typing import Any

import pyarrow as pa

__all__ = ["JsonEncoder"]


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(f"{type(value).__name__} is not JSON")


def _maps_as_objects(value: Any, typ: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_map(typ):
        return {k: _maps_as_objects(v, typ.item_type) for k, v in value}
    if pa.types.is_struct(typ):
        return {f.name: _maps_as_objects(value.get(f.name), f.type) for f in typ}
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return [_maps_as_objects(v, typ.value_type) for v in value]
    return value


class JsonEncoder:
    """Encodes values as JSON (``schema_id``: with the Confluent header)."""

    def __init__(self, schema_text: str, schema_id: int | None) -> None:
        self._header = b"" if schema_id is None else struct.pack(">bI", 0, schema_id)

    def encode(self, column: pa.Array, what: str) -> list[bytes | None]:
        """The payload of each value (``None`` for null values)."""
        typ = column.type
        return [
            None
            if v is None
            else self._header + json.dumps(_maps_as_objects(v, typ), default=_plain).encode()
            for v in column.to_pylist()
        ]
