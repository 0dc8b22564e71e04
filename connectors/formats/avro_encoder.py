"""``AvroEncoder``: a column of rows (Spark's types) -> Avro payloads, in the Confluent wire format.

The inverse of ``AvroDecoder`` for the sink: ``encode(column)`` turns each non-null value into
magic byte 0, the 4-byte schema id and the Avro body (or the bare body for plain ``avro``), with
fastavro's ``schemaless_writer``. Spark's values map back as ``from_avro`` produced them: maps
arrive from Arrow as key/value pairs (made dicts), ``member<i>`` structs of multi-branch unions
pick their one non-null member, logical types (timestamps, dates, decimals, times) are fastavro's.
A record field missing from the row takes its default; a row fastavro cannot encode fails naming
its position and the reason.

Threading: one encoder per writer task.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from connector_base import ConnectorError
from connectors.formats.avro_types import union_branches

__all__ = ["AvroEncoder"]


def _named(schema: Any, names: dict[str, Any], namespace: str | None) -> Any:
    if (
        isinstance(schema, dict)
        and "name" in schema
        and schema.get("type") in ("record", "error", "enum", "fixed")
    ):
        name = str(schema["name"])
        ns = schema.get("namespace", namespace)
        full = name if "." in name or not ns else f"{ns}.{name}"
        names[full] = schema
        names.setdefault(name, schema)
    return schema


def _to_avro(schema: Any, names: dict[str, Any], namespace: str | None = None) -> Callable[[Any], Any] | None:
    """A per-value function from Spark/Arrow Python values to fastavro's (None: identity)."""
    if isinstance(schema, str):
        return None
    if isinstance(schema, list):
        branches = union_branches(schema)
        subs = [_to_avro(b, names, namespace) for b in branches]
        kinds = {b if isinstance(b, str) else b.get("type") for b in branches}
        if len(branches) > 1 and not (kinds <= {"int", "long"} or kinds <= {"float", "double"}):

            def pick(value: Any) -> Any:
                if value is None:
                    return None
                for i, sub in enumerate(subs):
                    member = value.get(f"member{i}")
                    if member is not None:
                        branch = branches[i]
                        out = sub(member) if sub is not None else member
                        if isinstance(branch, dict) and branch.get("type") in ("record", "error"):
                            return (str(branch["name"]), out)  # fastavro's explicit branch
                        return out
                return None

            return pick
        return subs[0] if subs else None
    if not isinstance(schema, dict):
        return None
    _named(schema, names, namespace)
    kind = schema.get("type")
    if isinstance(kind, (dict, list)):
        return _to_avro(kind, names, namespace)
    if kind in ("record", "error"):
        convs = [(str(f["name"]), _to_avro(f["type"], names, namespace)) for f in schema.get("fields", [])]
        active = [(n, c) for n, c in convs if c is not None]
        if not active:
            return None

        def record(value: Any) -> Any:
            if value is None:
                return None
            return {**value, **{n: c(value.get(n)) for n, c in active if n in value}}

        return record
    if kind == "array":
        item = _to_avro(schema["items"], names, namespace)
        return None if item is None else (lambda v: None if v is None else [item(x) for x in v])
    if kind == "map":
        val = _to_avro(schema["values"], names, namespace)
        if val is None:
            return lambda v: None if v is None else dict(v)
        return lambda v: None if v is None else {k: val(x) for k, x in v}
    return None


class AvroEncoder:
    """Encodes values to Avro with one writer schema (``schema_id``: Confluent wire format)."""

    def __init__(self, schema_text: str, schema_id: int | None) -> None:
        import fastavro

        schema = json.loads(schema_text)
        self._parsed = fastavro.parse_schema(schema)
        self._convert = _to_avro(schema, {})
        self._header = b"" if schema_id is None else struct.pack(">bI", 0, schema_id)

    def encode(self, column: pa.Array, what: str) -> list[bytes | None]:
        """The payload of each value (``None`` for null values: a tombstone)."""
        import fastavro

        out: list[bytes | None] = []
        writer = fastavro.schemaless_writer
        for i, value in enumerate(column.to_pylist()):
            if value is None:
                out.append(None)
                continue
            if self._convert is not None:
                value = self._convert(value)
            buf = io.BytesIO()
            buf.write(self._header)
            try:
                writer(buf, self._parsed, value)
            except Exception as exc:  # noqa: BLE001 - fastavro's ValueError/TypeError/...: name the row
                raise ConnectorError(
                    f"row {i} of the batch: its {what} cannot be encoded with the Avro schema: "
                    f"{type(exc).__name__}: {str(exc)[:300]}"
                ) from None
            out.append(buf.getvalue())
        return out
