"""Avro schema -> Arrow type, the mapping Spark's ``from_avro`` gives (``SchemaConverters.toSqlType``).

| Avro | Spark (Arrow) |
|---|---|
| null | void (null) |
| boolean, int, long, float, double | boolean, int, bigint, float, double |
| string, enum, uuid | string |
| bytes, fixed | binary |
| decimal(p, s) on bytes or fixed | decimal(p, s) |
| date | date (date32) |
| time-millis | int (the raw count, as Spark) |
| time-micros | time(6) (Spark 4.1+; time64[us]) |
| timestamp-millis / -micros | timestamp (microseconds, UTC) |
| local-timestamp-millis / -micros | timestamp_ntz (microseconds) |
| record | struct (fields in order) |
| array | array |
| map | map<string, V> |
| union [null, T] / [T] | T, nullable |
| union of int and long (and null) | bigint |
| union of float and double (and null) | double |
| any other union | struct<member0, member1, ...> over the non-null branches |

A recursive record is refused (as Spark does by default). ``avro_arrow_type`` works on a schema
already parsed to JSON (``dict``/``list``/``str``) with named types looked up in ``names``.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from connector_base import ConnectorError

__all__ = ["AvroSchemaError", "avro_arrow_type", "is_nullable_union", "union_branches"]

PRIMITIVES = {
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}
TIMESTAMP_UTC = pa.timestamp("us", tz="UTC")
TIMESTAMP_NTZ = pa.timestamp("us")


class AvroSchemaError(ConnectorError):
    """An Avro schema that cannot be mapped to Spark types (recursive, malformed)."""


def _full_name(schema: dict[str, Any], namespace: str | None) -> str:
    name = str(schema["name"])
    if "." in name:
        return name
    ns = schema.get("namespace", namespace)
    return f"{ns}.{name}" if ns else name


def _lookup(name: str, names: dict[str, Any], namespace: str | None) -> Any:
    for candidate in (f"{namespace}.{name}" if namespace and "." not in name else name, name):
        if candidate in names:
            return names[candidate]
    raise AvroSchemaError(f"Avro schema names type {name!r}, which it does not define")


def union_branches(schema: list[Any]) -> list[Any]:
    """The non-null branches of a union."""
    return [b for b in schema if b != "null" and not (isinstance(b, dict) and b.get("type") == "null")]


def is_nullable_union(schema: Any) -> bool:
    """Whether ``schema`` is a union that holds null."""
    return isinstance(schema, list) and len(union_branches(schema)) < len(schema)


def _logical(schema: dict[str, Any], wire_units: bool) -> pa.DataType | None:
    logical = schema.get("logicalType")
    base = schema.get("type")
    match logical, base:
        case "decimal", "bytes" | "fixed":
            precision = int(schema.get("precision", 0))
            scale = int(schema.get("scale", 0))
            if precision < 1 or not 0 <= scale <= precision:
                raise AvroSchemaError(f"decimal with precision {precision} and scale {scale} is not valid")
            return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
        case "date", "int":
            return pa.date32()
        case "time-micros", "long":
            return pa.time64("us")  # Spark 4.1+: TIME(6)
        case "timestamp-millis", "long":
            return pa.timestamp("ms", tz="UTC") if wire_units else TIMESTAMP_UTC
        case "timestamp-micros", "long":
            return TIMESTAMP_UTC
        case "local-timestamp-millis", "long":
            return pa.timestamp("ms") if wire_units else TIMESTAMP_NTZ
        case "local-timestamp-micros", "long":
            return TIMESTAMP_NTZ
    return None  # time-millis, uuid and unknown logical types: the base type, as Spark


def avro_arrow_type(
    schema: Any,
    names: dict[str, Any] | None = None,
    namespace: str | None = None,
    _stack: tuple[str, ...] = (),
    *,
    wire_units: bool = False,
) -> pa.DataType:
    """The Arrow type Spark's ``from_avro`` gives ``schema`` (names collected into ``names``).

    With ``wire_units`` millisecond timestamps stay ``timestamp[ms]``: the type to build from the
    raw longs the decoder reads, cast to the final type (microseconds) in one vectorized pass.
    """
    names = {} if names is None else names
    if isinstance(schema, str):
        if schema in PRIMITIVES:
            return PRIMITIVES[schema]
        named = _lookup(schema, names, namespace)
        full = _full_name(named, namespace)
        if full in _stack:
            raise AvroSchemaError(
                f"Avro record {full!r} is recursive; Spark types cannot hold it "
                "(nor does from_avro by default)"
            )
        return avro_arrow_type(named, names, namespace, _stack, wire_units=wire_units)
    if isinstance(schema, list):
        branches = union_branches(schema)
        if not branches:
            return pa.null()
        types = [avro_arrow_type(b, names, namespace, _stack, wire_units=wire_units) for b in branches]
        if len(types) == 1:
            return types[0]
        if set(types) <= {pa.int32(), pa.int64()}:
            return pa.int64()
        if set(types) <= {pa.float32(), pa.float64()}:
            return pa.float64()
        return pa.struct([pa.field(f"member{i}", t) for i, t in enumerate(types)])
    if not isinstance(schema, dict):
        raise AvroSchemaError(f"not an Avro schema: {schema!r}")
    kind = schema.get("type")
    if isinstance(kind, (dict, list)):
        return avro_arrow_type(kind, names, namespace, _stack, wire_units=wire_units)
    logical = _logical(schema, wire_units)
    if logical is not None:
        if kind == "fixed":
            names[_full_name(schema, namespace)] = schema
        return logical
    match kind:
        case "record" | "error":
            full = _full_name(schema, namespace)
            if full in _stack:
                raise AvroSchemaError(f"Avro record {full!r} is recursive; Spark types cannot hold it")
            names[full] = schema
            inner_ns = full.rpartition(".")[0] or None
            fields = [
                pa.field(
                    str(f["name"]),
                    avro_arrow_type(f["type"], names, inner_ns, (*_stack, full), wire_units=wire_units),
                )
                for f in schema.get("fields", [])
            ]
            return pa.struct(fields)
        case "enum":
            names[_full_name(schema, namespace)] = schema
            return pa.string()
        case "fixed":
            names[_full_name(schema, namespace)] = schema
            return pa.binary()
        case "array":
            return pa.list_(avro_arrow_type(schema["items"], names, namespace, _stack, wire_units=wire_units))
        case "map":
            return pa.map_(
                pa.string(),
                avro_arrow_type(schema["values"], names, namespace, _stack, wire_units=wire_units),
            )
        case str() if kind in PRIMITIVES:
            return PRIMITIVES[kind]
        case str():
            return avro_arrow_type(kind, names, namespace, _stack, wire_units=wire_units)
    raise AvroSchemaError(f"not an Avro schema: {schema!r}")
