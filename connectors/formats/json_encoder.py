"""``JsonEncoder``: a column of rows -> JSON payloads (Confluent wire format with a schema id).

The sink's side of ``json-confluent`` / ``json``: each non-null value becomes the JSON text of the
row (maps as objects, timestamps and dates in ISO 8601, decimals as numbers), after the 5-byte
header when the schema has a registry id. Each row's JSON is validated against the schema first
(``<p>Validate``, default ``true`` as in Confluent's ``JSONSerializer``, same validator as the
reader's: ``json_decoder.json_validator``); a row that does not validate fails the write naming
the row, the column and the JSON pointer.

Threading: one encoder per writer task.
"""

from __future__ import annotations

import datetime
import decimal
import json
import struct
from typing import Any

import pyarrow as pa

from connector_base import ConnectorError
from connectors.formats.json_decoder import JsonSchemaValidationError, json_validator

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

    def __init__(self, schema_text: str, schema_id: int | None, validate: bool = True) -> None:
        self._header = b"" if schema_id is None else struct.pack(">bI", 0, schema_id)
        self._check = json_validator(schema_text) if validate else None

    def encode(self, column: pa.Array, what: str) -> list[bytes | None]:
        """The payload of each value (``None`` for null values)."""
        typ, check = column.type, self._check
        out: list[bytes | None] = []
        for i, v in enumerate(column.to_pylist()):
            if v is None:
                out.append(None)
                continue
            text = json.dumps(_maps_as_objects(v, typ), default=_plain)
            if check is not None:
                try:
                    check(json.loads(text))
                except JsonSchemaValidationError as exc:
                    raise ConnectorError(
                        f"row {i} of the batch: its {what} {exc} (set {what}Validate=false "
                        "to write it unchecked)"
                    ) from None
            out.append(self._header + text.encode())
        return out
