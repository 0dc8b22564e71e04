"""``ProtobufEncoder``: a column of rows (Spark's types) -> Protobuf payloads in the Confluent wire format.

The inverse of ``ProtobufDecoder`` for the sink: each non-null row becomes magic byte 0, the 4-byte
schema id, the message indexes of the writer message (``<p>RecordName``, else the schema's first
message; ``[0]`` is the single byte 0) and the message's bytes. Spark's values map back as
``from_protobuf`` gave them: enum names, timestamps and day-time intervals to
``Timestamp``/``Duration``, maps from Arrow's key/value pairs, null fields left unset. A row the
message cannot hold (an unknown enum name, a value out of range, a field the message lacks) fails
naming the row's position and the reason.

Threading: one encoder per writer task.
"""

from __future__ import annotations

import datetime
import struct
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from connector_base import ConnectorError
from connectors.formats.protobuf_schema import ProtoSchema, encode_message_indexes
from connectors.formats.protobuf_types import is_duration, is_repeated, is_timestamp

__all__ = ["ProtobufEncoder"]

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _time_value(value: Any) -> dict[str, int]:
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.UTC)
        value = value - _EPOCH
    if isinstance(value, datetime.timedelta):
        micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    else:
        micros = int(value)
    seconds, rest = divmod(micros, 1_000_000)
    return {"seconds": seconds, "nanos": rest * 1000}


def _field_setter(fd: Any) -> Callable[[Any], Any] | None:
    from google.protobuf.descriptor import FieldDescriptor as F

    if fd.type in (F.TYPE_UINT32, F.TYPE_FIXED32, F.TYPE_UINT64, F.TYPE_FIXED64):
        mask = 0xFFFF_FFFF if fd.type in (F.TYPE_UINT32, F.TYPE_FIXED32) else 0xFFFF_FFFF_FFFF_FFFF

        def unsigned(value: int) -> int:  # Spark holds them signed (Java's view): the same bits
            return value & mask

        return (lambda values: [v & mask for v in values]) if is_repeated(fd) else unsigned
    if fd.type not in (F.TYPE_MESSAGE, F.TYPE_GROUP):
        return None
    desc = fd.message_type
    if desc.GetOptions().map_entry:
        value = _field_setter(desc.fields_by_name["value"])
        if value is None:
            return lambda pairs: dict(pairs)
        return lambda pairs: {k: value(v) for k, v in pairs}
    item = _time_value if is_timestamp(desc) or is_duration(desc) else _message_kwargs(desc)
    if is_repeated(fd):
        return lambda values: [item(v) for v in values]
    return item


def _message_kwargs(desc: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    setters = {fd.name: _field_setter(fd) for fd in desc.fields}

    def kwargs(row: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for name, value in row.items():
            if value is None:
                continue
            if name not in setters:
                raise ValueError(f"message {desc.full_name} has no field {name!r}")
            setter = setters[name]
            out[name] = value if setter is None else setter(value)
        return out

    return kwargs


class ProtobufEncoder:
    """Encodes struct values as a Protobuf message (``schema_id``: with the Confluent header)."""

    def __init__(
        self,
        schema_text: str,
        schema_id: int | None,
        message_name: str | None = None,
        references: Sequence[tuple[str, str]] = (),
    ) -> None:
        from google.protobuf import message_factory

        schema = ProtoSchema.compile(schema_text, references)
        message = schema.message(message_name)
        self._class = message_factory.GetMessageClass(message)
        self._kwargs = _message_kwargs(message)
        self._header = (
            b""
            if schema_id is None
            else struct.pack(">bI", 0, schema_id) + encode_message_indexes(schema.indexes_of(message))
        )

    def encode(self, column: pa.Array, what: str) -> list[bytes | None]:
        """The payload of each value (``None`` for null values)."""
        if not pa.types.is_struct(column.type):
            raise ConnectorError(
                f"the {what} column is {column.type}; protobuf-confluent encodes a struct column "
                "(the message's fields)"
            )
        out: list[bytes | None] = []
        cls, kwargs, header = self._class, self._kwargs, self._header
        for i, row in enumerate(column.to_pylist()):
            if row is None:
                out.append(None)
                continue
            try:
                out.append(header + cls(**kwargs(row)).SerializeToString())
            except (ValueError, TypeError, KeyError) as exc:
                raise ConnectorError(
                    f"row {i} of the {what} column cannot be encoded as {cls.DESCRIPTOR.full_name}: "
                    f"{type(exc).__name__}: {str(exc)[:300]}"
                ) from None
        return out
