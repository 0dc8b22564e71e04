"""``AvroDecoder``: Avro payloads of many writer schemas -> one Arrow array of the reader schema's type.

Decoding is fastavro's (Cython; MIT licence; a dependency of confluent-kafka's own ``avro``
extra): payloads that share a writer schema are read with ``schemaless_reader`` and the reader
schema, so Avro's resolution rules (fields added with defaults, removed, reordered, aliases,
numeric promotion, enum defaults) are fastavro's; when writer and reader schema are equal the
resolution pass is skipped. (Wrapping a group as one container block for ``fastavro.reader`` was
measured slower: 39k records/s with a reader schema against 106k per record, one core, the
benchmark's 15-field schema.) If any record of a group fails, the group is decoded again one
record at a time to find which are malformed. Records come back as dicts, handed to
``pyarrow.array`` in one call (no Python code per field); millisecond timestamps and dates arrive
as raw numbers (their logical types are stripped before decoding, which resolution ignores) and are
cast to Spark's units in one vectorized pass. Unions of several non-null branches (Spark's
``member0..N`` structs) are the one case that runs Python code per record.

Native Avro->Arrow readers were weighed (background note: polars-avro 0.13, jetliner 0.2 and
polars' own reader decode ~5M records/s/core versus fastavro's ~0.35M): all three are 0.x, pull
polars (~40 MB), refuse unions of more than one non-null branch and do no reader-schema
resolution, so they would need this module anyway as the fallback. They are not used yet: this
path is a dict per record (fastavro's), the pure fallback, not the native batch decoder the issue
asks for; docs/formats.md has the measured figures and the plan.

Threading: a decoder is used by one thread at a time (the emitter's).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa

from connectors.formats.avro_types import AvroSchemaError, avro_arrow_type, union_branches

__all__ = ["AvroDecoder", "strip_time_logical_types"]

_STRIPPED = {
    "date",
    "time-millis",
    "time-micros",
    "timestamp-millis",
    "timestamp-micros",
    "local-timestamp-millis",
    "local-timestamp-micros",
    "uuid",
}


def strip_time_logical_types(schema: Any) -> Any:
    """A copy of ``schema`` without date/time/uuid logical types (decimals kept)."""
    if isinstance(schema, list):
        return [strip_time_logical_types(s) for s in schema]
    if isinstance(schema, dict):
        out = {k: strip_time_logical_types(v) for k, v in schema.items() if k != "logicalType"}
        if "logicalType" in schema and schema["logicalType"] not in _STRIPPED:
            out["logicalType"] = schema["logicalType"]
        return out
    return schema


def _branch_kind(schema: Any, names: dict[str, Any]) -> str:
    if isinstance(schema, str) and schema not in (
        "null",
        "boolean",
        "int",
        "long",
        "float",
        "double",
        "bytes",
        "string",
    ):
        schema = names.get(schema, schema)
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), (dict, list)):
            return _branch_kind(schema["type"], names)
        if schema.get("logicalType") == "decimal":
            return "decimal"
        return str(schema.get("type"))
    return str(schema)


_PY_KIND: dict[type, tuple[str, ...]] = {
    bool: ("boolean",),
    int: ("int", "long"),
    float: ("float", "double"),
    str: ("string", "enum"),
    bytes: ("bytes", "fixed"),
    Decimal: ("decimal",),
    dict: ("record", "error", "map"),
    list: ("array",),
}


def _converter(schema: Any, names: dict[str, Any]) -> Callable[[Any], Any] | None:
    """A per-value function turning multi-branch union values into ``member<i>`` dicts (None: identity)."""
    if isinstance(schema, str):
        return None  # named references are not expanded again (records are not recursive)
    if isinstance(schema, list):
        branches = union_branches(schema)
        kinds = [_branch_kind(b, names) for b in branches]
        if len(branches) <= 1 or set(kinds) <= {"int", "long"} or set(kinds) <= {"float", "double"}:
            inner = _converter(branches[0], names) if branches else None
            return inner
        subs = [_converter(b, names) for b in branches]
        named = {
            (b.get("name") if isinstance(b, dict) else b): i
            for i, b in enumerate(branches)
            if isinstance(b, str) or (isinstance(b, dict) and "name" in b)
        }
        members = [f"member{i}" for i in range(len(branches))]

        def convert(value: Any) -> Any:
            if value is None:
                return None
            index = None
            if isinstance(value, tuple):  # (name, value) where several named types share the union
                name, value = value
                index = named.get(name)
                if index is None:
                    index = next((i for n, i in named.items() if str(n).endswith("." + str(name))), None)
            if index is None:
                wanted = _PY_KIND.get(type(value), ())
                index = next((i for i, k in enumerate(kinds) if k in wanted), 0)
            out = dict.fromkeys(members)
            sub = subs[index]
            out[members[index]] = sub(value) if sub is not None else value
            return out

        return convert
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, (dict, list)):
        return _converter(kind, names)
    if kind in ("record", "error"):
        field_convs = [(str(f["name"]), _converter(f["type"], names)) for f in schema.get("fields", [])]
        active = [(n, c) for n, c in field_convs if c is not None]
        if not active:
            return None

        def convert_record(value: Any) -> Any:
            if value is None:
                return None
            for name, conv in active:
                value[name] = conv(value.get(name))
            return value

        return convert_record
    if kind == "array":
        item = _converter(schema["items"], names)
        if item is None:
            return None
        return lambda value: None if value is None else [item(v) for v in value]
    if kind == "map":
        val = _converter(schema["values"], names)
        if val is None:
            return None
        return lambda value: None if value is None else {k: val(v) for k, v in value.items()}
    return None


class AvroDecoder:
    """Decodes header-less Avro payloads to the reader schema's Arrow type (Spark's ``from_avro`` types)."""

    def __init__(self, reader_schema: str) -> None:
        import fastavro

        try:
            reader = json.loads(reader_schema)
        except json.JSONDecodeError as exc:
            raise AvroSchemaError(f"the reader schema is not JSON: {exc}") from None
        names: dict[str, Any] = {}
        self.arrow_type = avro_arrow_type(reader, names)
        self._wire_type = avro_arrow_type(reader, {}, wire_units=True)
        self._convert = _converter(reader, names)
        try:
            self._reader = fastavro.parse_schema(strip_time_logical_types(reader))
        except Exception as exc:  # fastavro's SchemaParseException and friends
            raise AvroSchemaError(f"the reader schema is not a valid Avro schema: {exc}") from None
        self._reader_canonical = json.dumps(strip_time_logical_types(reader), sort_keys=True)
        self._writers: dict[str, tuple[Any, bool]] = {}

    def _writer(self, writer_schema: str) -> tuple[Any, bool]:
        """The parsed writer schema and whether it equals the reader schema."""
        import fastavro

        cached = self._writers.get(writer_schema)
        if cached is None:
            stripped = strip_time_logical_types(json.loads(writer_schema))
            same = json.dumps(stripped, sort_keys=True) == self._reader_canonical
            cached = self._writers[writer_schema] = (fastavro.parse_schema(stripped), same)
        return cached

    def decode_group(self, payloads: Sequence[bytes], writer_schema: str) -> list[Any | Exception]:
        """Each payload decoded (a dict or value) or the exception that refused it; same order.

        A record the reader schema cannot resolve (a missing default, an enum symbol or union
        branch the reader lacks) comes back as ``fastavro``'s ``SchemaResolutionError``.
        """
        import fastavro

        parsed, same = self._writer(writer_schema)
        reader = None if same else self._reader  # no resolution pass when the schemas are equal
        read = fastavro.schemaless_reader
        bytes_io = io.BytesIO
        try:  # the common case: every record well formed, one comprehension
            return [read(bytes_io(p), parsed, reader, return_named_type_override=True) for p in payloads]
        except Exception:  # noqa: BLE001 - find the failing records one by one below
            pass
        out: list[Any | Exception] = []
        for payload in payloads:
            try:
                out.append(read(bytes_io(payload), parsed, reader, return_named_type_override=True))
            except Exception as exc:  # noqa: BLE001 - the caller applies the parse mode
                out.append(exc)
        return out

    def to_arrow(self, values: list[Any]) -> pa.Array:
        """The Arrow array of decoded values (``None`` for null rows)."""
        if self._convert is not None:
            values = [self._convert(v) for v in values]
        return pa.array(values, self._wire_type).cast(self.arrow_type)


def describe_error(exc: Exception) -> str:
    """A short, secret-free description of a decoding failure."""
    text = str(exc).split(os.linesep)[0][:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def is_resolution_error(exc: Exception) -> bool:
    """Whether ``exc`` says the reader schema cannot resolve the writer's data (not malformed bytes)."""
    from fastavro.read import SchemaResolutionError

    return isinstance(exc, SchemaResolutionError)
