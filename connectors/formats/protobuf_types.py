"""Protobuf message descriptors -> Arrow types, as Spark's ``from_protobuf`` (spark-protobuf) maps them.

With spark-protobuf's default options:

| Protobuf | Spark |
|---|---|
| int32, sint32, sfixed32, uint32, fixed32 | int (unsigned values above 2^31-1 wrap, as in Java) |
| int64, sint64, sfixed64, uint64, fixed64 | bigint (likewise) |
| float, double, bool, string, bytes | float, double, boolean, string, binary |
| enum | string (the value's name) |
| message | struct (a message with no fields is dropped, as Spark drops it) |
| repeated T | array<T> (elements not null) |
| map<K, V> | map<K, V> |
| ``oneof`` | its fields, each nullable (the one set has a value) |
| any message named ``Timestamp`` with fields seconds, nanos | timestamp |
| any message named ``Duration`` with fields seconds, nanos | interval day to second |
| wrappers (``google.protobuf.Int32Value`` ...), ``Any`` | struct<value> / struct<type_url, value> |
| a message reachable from itself | refused (Spark's ``recursive.fields.max.depth`` default) |

``wire_type`` is the type ``pyarrow.array`` is first built with (uint32/uint64 for unsigned fields,
int64 microseconds for timestamps and durations); ``arrow_type`` is the type cast to.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from connectors.formats.protobuf_schema import ProtobufSchemaError

__all__ = ["ProtobufRecursionError", "is_duration", "is_repeated", "is_timestamp", "message_arrow_types"]


class ProtobufRecursionError(ProtobufSchemaError):
    """A message that contains itself: Spark's ``from_protobuf`` refuses it by default."""


def is_repeated(fd: Any) -> bool:
    """Whether a field is repeated (``is_repeated`` since protobuf 5.x replaced ``label``, gone in 7)."""
    flag = getattr(fd, "is_repeated", None)
    if flag is not None:
        return bool(flag)
    return bool(fd.label == fd.LABEL_REPEATED)


def _time_message(desc: Any, name: str) -> bool:
    fields = desc.fields
    return (
        desc.name == name and len(fields) == 2 and fields[0].name == "seconds" and fields[1].name == "nanos"
    )


def is_timestamp(desc: Any) -> bool:
    """Whether a message type maps to Spark's timestamp (Spark matches the simple name and fields)."""
    return _time_message(desc, "Timestamp")


def is_duration(desc: Any) -> bool:
    """Whether a message type maps to Spark's day-time interval."""
    return _time_message(desc, "Duration")


def _scalar(fd: Any) -> tuple[pa.DataType, pa.DataType]:
    from google.protobuf.descriptor import FieldDescriptor as F

    t = fd.type
    if t in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32):
        return pa.int32(), pa.int32()
    if t in (F.TYPE_UINT32, F.TYPE_FIXED32):
        return pa.uint32(), pa.int32()
    if t in (F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64):
        return pa.int64(), pa.int64()
    if t in (F.TYPE_UINT64, F.TYPE_FIXED64):
        return pa.uint64(), pa.int64()
    if t == F.TYPE_FLOAT:
        return pa.float32(), pa.float32()
    if t == F.TYPE_DOUBLE:
        return pa.float64(), pa.float64()
    if t == F.TYPE_BOOL:
        return pa.bool_(), pa.bool_()
    if t in (F.TYPE_STRING, F.TYPE_ENUM):
        return pa.string(), pa.string()
    if t == F.TYPE_BYTES:
        return pa.binary(), pa.binary()
    raise ProtobufSchemaError(f"field {fd.full_name}: Protobuf type {t} (groups) is not supported by Spark")


def _field_types(fd: Any, seen: tuple[str, ...]) -> tuple[pa.DataType, pa.DataType] | None:
    """``(wire, spark)`` Arrow types of one field, or ``None`` when Spark drops it (empty message)."""
    from google.protobuf.descriptor import FieldDescriptor as F

    if fd.type in (F.TYPE_MESSAGE, F.TYPE_GROUP) and fd.message_type.GetOptions().map_entry:
        key, value = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
        k = _single(key, seen)
        v = _single(value, seen)
        if k is None or v is None:
            return None
        return pa.map_(k[0], pa.field("value", v[0], nullable=False)), pa.map_(
            k[1], pa.field("value", v[1], nullable=False)
        )
    single = _single(fd, seen)
    if single is None:
        return None
    if is_repeated(fd):
        return pa.list_(pa.field("element", single[0], nullable=False)), pa.list_(
            pa.field("element", single[1], nullable=False)
        )
    return single


def _single(fd: Any, seen: tuple[str, ...]) -> tuple[pa.DataType, pa.DataType] | None:
    from google.protobuf.descriptor import FieldDescriptor as F

    if fd.type not in (F.TYPE_MESSAGE, F.TYPE_GROUP):
        return _scalar(fd)
    desc = fd.message_type
    if is_timestamp(desc):
        return pa.int64(), pa.timestamp("us", tz="UTC")
    if is_duration(desc):
        return pa.int64(), pa.duration("us")
    if desc.full_name in seen:
        raise ProtobufRecursionError(
            f"found a recursive reference in the Protobuf schema: field {fd.full_name} of type "
            f"{desc.full_name} contains itself ({' -> '.join((*seen, desc.full_name))}); Spark's "
            "from_protobuf refuses recursive messages by default (recursive.fields.max.depth), and so "
            "does this format"
        )
    wire, spark = _message_types(desc, (*seen, desc.full_name))
    if not spark:
        return None  # Spark drops a field whose message has no fields
    return wire, spark


def _message_types(desc: Any, seen: tuple[str, ...]) -> tuple[pa.StructType, pa.StructType]:
    wire: list[pa.Field] = []
    spark: list[pa.Field] = []
    for fd in desc.fields:
        types = _field_types(fd, seen)
        if types is None:
            continue
        wire.append(pa.field(fd.name, types[0]))
        spark.append(pa.field(fd.name, types[1]))
    return pa.struct(wire), pa.struct(spark)


def message_arrow_types(desc: Any) -> tuple[pa.StructType, pa.StructType]:
    """``(wire, spark)`` struct types of a message (``ProtobufRecursionError`` if it is recursive)."""
    return _message_types(desc, (desc.full_name,))
