"""The native Protobuf decoder's *plan*: a reader message's fields as the compiled decoder walks them.

The compiled module's ``ProtobufBatchDecoder`` (``native/kafka_reader/src/protobuf_decode.rs``)
reads Confluent-framed Protobuf payloads straight into Arrow buffers. It does not interpret
descriptors itself: this module hands it, per field the Spark type keeps (``protobuf_types``), the
field number, kind, presence, oneof, proto2 default (enum defaults already named, as the Python
converter names them), enum names and closedness, nested plans, and map key/value plans, derived
from the same protoc-compiled descriptors the Python decoder uses. The Spark mapping therefore stays
in one place, and the two decoders cannot disagree on which fields exist or how they are typed.

``native_plan`` returns ``None`` where the native decoder is out of scope (a message named
``Timestamp``/``Duration`` whose ``seconds``/``nanos`` are not int64/int32, which Spark maps by name
alone); the Python decoder then decodes everything. ``SPARKFLOW_PROTOBUF_DECODER=python`` forces the
Python decoder (tests, benchmarks).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from connectors.formats.native_module import compiled_class
from connectors.formats.protobuf_types import is_duration, is_repeated, is_timestamp

__all__ = ["native_plan", "native_protobuf_decoder"]

_NATIVE_ENV = "SPARKFLOW_PROTOBUF_DECODER"


class _OutOfScope(Exception):
    """A message the native decoder does not take (the Python decoder reads it)."""


def native_protobuf_decoder() -> Any:
    """The compiled ``ProtobufBatchDecoder`` class, or ``None`` (module absent or older, forced off)."""
    return compiled_class("ProtobufBatchDecoder", _NATIVE_ENV)


def _kinds() -> dict[int, str]:
    from google.protobuf.descriptor import FieldDescriptor as F

    return {
        F.TYPE_INT32: "int32", F.TYPE_SINT32: "sint32", F.TYPE_SFIXED32: "sfixed32",
        F.TYPE_UINT32: "uint32", F.TYPE_FIXED32: "fixed32", F.TYPE_INT64: "int64",
        F.TYPE_SINT64: "sint64", F.TYPE_SFIXED64: "sfixed64", F.TYPE_UINT64: "uint64",
        F.TYPE_FIXED64: "fixed64", F.TYPE_FLOAT: "float", F.TYPE_DOUBLE: "double",
        F.TYPE_BOOL: "bool", F.TYPE_STRING: "string", F.TYPE_BYTES: "bytes", F.TYPE_ENUM: "enum",
        F.TYPE_MESSAGE: "message",
    }  # fmt: skip


def _time_fields_fit(desc: Any) -> bool:
    from google.protobuf.descriptor import FieldDescriptor as F

    seconds, nanos = desc.fields
    return (
        seconds.type == F.TYPE_INT64 and nanos.type == F.TYPE_INT32 and not any(map(is_repeated, desc.fields))
    )


def _enum(enum: Any) -> dict[str, Any]:
    return {
        "name": enum.name,
        "closed": bool(getattr(enum, "is_closed", False)),
        "values": [(v.number, v.name) for v in enum.values],
    }


def _field(fd: Any, typ: pa.DataType, kinds: dict[int, str]) -> dict[str, Any]:
    from google.protobuf.descriptor import FieldDescriptor as F

    kind = kinds.get(fd.type)
    if kind is None:
        raise _OutOfScope(f"field {fd.full_name}: type {fd.type}")
    oneof = fd.containing_oneof
    plan: dict[str, Any] = {
        "number": fd.number,
        "name": fd.name,
        "kind": kind,
        "map": False,
        "repeated": False,
        "presence": bool(fd.has_presence),
        "oneof": list(fd.containing_type.oneofs).index(oneof) if oneof is not None else -1,
        "default": None,
    }
    if fd.type == F.TYPE_MESSAGE and pa.types.is_map(typ):
        entry = fd.message_type
        plan["map"] = True
        plan["key"] = _field(entry.fields_by_name["key"], typ.key_type, kinds)
        plan["value"] = _field(entry.fields_by_name["value"], typ.item_type, kinds)
        return plan
    if is_repeated(fd):
        plan["repeated"] = True
        typ = typ.value_type
    elif getattr(fd, "has_default_value", False) and fd.type != F.TYPE_MESSAGE:
        value = fd.default_value  # as the Python converter reads it (enum: the value's name)
        if fd.type == F.TYPE_ENUM:
            names = {v.number: v.name for v in fd.enum_type.values}
            value = names.get(value, f"UNKNOWN_ENUM_VALUE_{fd.enum_type.name}_{value}")
        plan["default"] = value
    if fd.type == F.TYPE_ENUM:
        plan["enum"] = _enum(fd.enum_type)
    elif fd.type == F.TYPE_MESSAGE:
        desc = fd.message_type
        if is_timestamp(desc) or is_duration(desc):
            if not _time_fields_fit(desc):
                raise _OutOfScope(f"{desc.full_name}: seconds/nanos are not int64/int32")
            plan["kind"] = "timestamp" if is_timestamp(desc) else "duration"
        else:
            plan["message"] = desc.full_name
            plan["fields"] = _message(desc, typ, kinds)
    return plan


def _message(desc: Any, typ: pa.StructType, kinds: dict[int, str]) -> list[dict[str, Any]]:
    kept = {typ.field(i).name: typ.field(i).type for i in range(typ.num_fields)}
    return [_field(fd, kept[fd.name], kinds) for fd in desc.fields if fd.name in kept]


def native_plan(desc: Any, arrow_type: pa.StructType) -> list[dict[str, Any]] | None:
    """The plan of message ``desc`` whose Spark Arrow type is ``arrow_type``; ``None``: out of scope."""
    try:
        return _message(desc, arrow_type, _kinds())
    except _OutOfScope:
        return None
