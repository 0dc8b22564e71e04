"""``ProtobufDecoder``: Protobuf payloads of many writer schemas -> one Arrow array of the reader message.

The reader message (``<p>RecordName``, else the reader schema's first message) is fixed at
``load()``; its Spark type is ``protobuf_types``' (Spark's ``from_protobuf`` mapping). Each record's
writer schema (by the id in its header) is compiled once per process and id, and the record's
message indexes are checked against it (out of range: malformed); the writer's message must be
the reader's (same full name), and the bytes are then parsed *with the reader message*, which is
Protobuf's own compatibility rule: fields match by number, unknown fields are ignored, missing
fields take their defaults. Values follow Spark's reading: a singular field that is not set (a
proto3 zero value, an unset ``optional``, message or ``oneof`` member) is null unless it has an
explicit proto2 default; repeated fields and maps are empty, never null.

The fast path (``decode_arrow``) is native: the compiled module's ``ProtobufBatchDecoder``
(``native/kafka_reader/src/protobuf_decode.rs``) reads a whole group of payloads (message indexes
checked against the reader message's path in the writer schema, then the message) straight into
one Arrow array of the Spark type, with the GIL released, walking the wire format against the plan
``protobuf_native.native_plan`` derives from the same descriptors. Whatever it refuses (a malformed
record, or anything where the runtime's answer is not certain: merged message fields, groups,
unknown closed-enum numbers, invalid UTF-8, ...) is decoded by the Python path below, which is the
reference and isolates bad records for the parse mode.

The Python path: parsing is the ``protobuf`` runtime's (upb, C): one ``FromString`` per record, then
a per-message converter (closures built once from the descriptor) turns the set fields
(``ListFields``) into the values ``pyarrow.array`` takes in one call per batch. Maps are parsed as
lists of their entries (``map_entries_in_wire_order``), so that their entries keep the wire's order
as Spark's and the native decoder's do; a key written twice keeps its first place and its last
value (Protobuf's rule; Spark's ``from_protobuf`` keeps both entries). This is Python code
per record: measured figures of both paths are in docs/formats.md. ptars (Rust, protobuf -> Arrow
in batches, 0.0.x) was weighed: a 0.0 release whose type mapping is not Spark's (timestamps, enums,
unsigned integers).

Threading: a decoder is used by one thread at a time (the emitter's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from connectors.formats.protobuf_native import native_plan, native_protobuf_decoder
from connectors.formats.protobuf_schema import (
    MessageIndexError,
    ProtobufSchemaError,
    ProtoSchema,
    decode_message_indexes,
    map_entries_in_wire_order,
)
from connectors.formats.protobuf_types import is_duration, is_repeated, is_timestamp, message_arrow_types

__all__ = ["MessageMismatchError", "ProtobufDecoder"]


class MessageMismatchError(ValueError):
    """The record was written as another message than the reader message."""


def _enum_names(enum: Any) -> Callable[[int], str]:
    names = {v.number: v.name for v in enum.values}
    unknown = f"UNKNOWN_ENUM_VALUE_{enum.name}_"  # what Java's DynamicMessage names an unknown number

    def name(number: int) -> str:
        found = names.get(number)
        return found if found is not None else f"{unknown}{number}"

    return name


def _micros(message: Any) -> int:
    nanos = message.nanos
    return message.seconds * 1_000_000 + (nanos // 1000 if nanos >= 0 else -((-nanos) // 1000))


def _element(fd: Any, wire: pa.DataType) -> Callable[[Any], Any] | None:
    """The per-value conversion of a singular field (None: identity)."""
    from google.protobuf.descriptor import FieldDescriptor as F

    if fd.type == F.TYPE_ENUM:
        return _enum_names(fd.enum_type)
    if fd.type not in (F.TYPE_MESSAGE, F.TYPE_GROUP):
        return None
    desc = fd.message_type
    if is_timestamp(desc) or is_duration(desc):
        return _micros
    return _message_converter(desc, wire)


def _field_converter(fd: Any, wire: pa.DataType) -> Callable[[Any], Any] | None:

    if pa.types.is_map(wire):  # parsed as a list of entry messages (``map_entries_in_wire_order``)
        entry = fd.message_type
        key = _element(entry.fields_by_name["key"], wire.key_type) or (lambda k: k)
        value = _element(entry.fields_by_name["value"], wire.item_type) or (lambda v: v)

        def pairs(entries: Any) -> list[tuple[Any, Any]]:
            kept = {e.key: e.value for e in entries}  # a key written again: first place, last value
            return [(key(k), value(v)) for k, v in kept.items()]

        return pairs
    if is_repeated(fd):
        item = _element(fd, wire.value_type)
        return list if item is None else (lambda values: [item(v) for v in values])
    return _element(fd, wire)


def _message_converter(desc: Any, wire: pa.StructType) -> Callable[[Any], dict[str, Any]]:
    """``message -> dict`` of the fields ``wire`` keeps, with Spark's null/default rules."""
    from google.protobuf.descriptor import FieldDescriptor as F

    kept = {wire.field(i).name: wire.field(i).type for i in range(wire.num_fields)}
    defaults: dict[str, Any] = dict.fromkeys(kept)
    # keyed by the descriptor object: upb keeps one Python object per field while it is referenced
    convs: dict[Any, tuple[str, Callable[[Any], Any] | None]] = {}
    for fd in desc.fields:
        if fd.name not in kept:
            continue  # dropped from the Spark type (a message without fields)
        typ = kept[fd.name]
        convs[fd] = (fd.name, _field_converter(fd, typ))
        if pa.types.is_map(typ) or is_repeated(fd):
            defaults[fd.name] = []
        elif getattr(fd, "has_default_value", False) and fd.type != F.TYPE_MESSAGE:
            value = fd.default_value
            defaults[fd.name] = _enum_names(fd.enum_type)(value) if fd.type == F.TYPE_ENUM else value

    def convert(message: Any) -> dict[str, Any]:
        out = defaults.copy()
        for fd, value in message.ListFields():
            entry = convs.get(fd)
            if entry is None:  # an extension, or a field dropped from the Spark type
                continue
            name, conv = entry
            out[name] = value if conv is None else conv(value)
        return out

    return convert


class ProtobufDecoder:
    """Decodes ``message indexes + Protobuf body`` payloads to the reader message's Arrow type."""

    def __init__(
        self,
        reader_schema: str,
        message_name: str | None = None,
        references: Sequence[tuple[str, str]] = (),
    ) -> None:
        from google.protobuf import message_factory

        self.schema = ProtoSchema.compile(reader_schema, references)
        self.message = self.schema.message(message_name)
        self._wire_type, self.arrow_type = message_arrow_types(self.message)
        parsed = map_entries_in_wire_order(self.message)  # maps in wire order, as Spark reads them
        self._class = message_factory.GetMessageClass(parsed)
        self._convert = _message_converter(parsed, self._wire_type)
        self._writers: dict[str, ProtoSchema] = {}
        self._checked: dict[tuple[str, tuple[int, ...]], Exception | None] = {}
        self._native: Any = None
        self._native_indexes: dict[str, list[int] | None] = {}  # writer text -> reader message's path
        native = native_protobuf_decoder()
        plan = native_plan(self.message, self.arrow_type) if native is not None else None
        if plan is not None:
            self._native = native(self.message.full_name, plan, self.arrow_type)

    @property
    def native(self) -> bool:
        """Whether groups are decoded natively (module present, reader message in its scope)."""
        return self._native is not None

    def _indexes_in(self, writer_schema: str, references: Sequence[tuple[str, str]]) -> list[int] | None:
        """The reader message's message-index path in the writer schema (``None``: not defined there)."""
        if writer_schema not in self._native_indexes:
            writer = self.writer_schema(writer_schema, references)
            try:
                path: list[int] | None = writer.indexes_of(writer.message(self.message.full_name))
            except ProtobufSchemaError:
                path = None
            self._native_indexes[writer_schema] = path
        return self._native_indexes[writer_schema]

    def decode_arrow(
        self,
        payloads: pa.Array,
        writer_schema: str,
        references: Sequence[tuple[str, str]] = (),
        skip: int = 0,
    ) -> pa.Array | None:
        """The group's payloads (binary without nulls), each after its first ``skip`` bytes (a header
        the caller has read), decoded natively, or ``None``.

        ``None``: the native decoder is absent or refused the group (the caller uses
        ``decode_group``, which isolates bad records). The result is in ``arrow_type``.
        """
        if self._native is None:
            return None
        indexes = self._indexes_in(writer_schema, references)
        if indexes is None:
            return None
        from sparkflow_kafka_native import ProtobufBatchError

        try:
            batch = pa.RecordBatch.from_arrays([payloads], names=["p"])
            arr: pa.Array = self._native.decode(batch, indexes, skip)
        except ProtobufBatchError:
            return None
        return arr

    def writer_schema(self, text: str, references: Sequence[tuple[str, str]] = ()) -> ProtoSchema:
        """The compiled writer schema (cached by text)."""
        schema = self._writers.get(text)
        if schema is None:
            schema = self._writers[text] = ProtoSchema.compile(text, references)
        return schema

    def new_fields(self, writer: ProtoSchema) -> list[str]:
        """Fields of the writer's reader-named message that the reader message lacks (by number)."""
        try:
            theirs = writer.pool.FindMessageTypeByName(self.message.full_name)
        except KeyError:
            return []
        mine = {fd.number for fd in self.message.fields}
        return sorted(fd.name for fd in theirs.fields if fd.number not in mine)

    def _check(self, writer_text: str, writer: ProtoSchema, indexes: list[int]) -> Exception | None:
        key = (writer_text, tuple(indexes))
        if key not in self._checked:
            try:
                written = writer.message_by_indexes(indexes)
                error: Exception | None = None
                if written.full_name != self.message.full_name:
                    error = MessageMismatchError(
                        f"the record was written as message {written.full_name} (message indexes "
                        f"{indexes}), the reader message is {self.message.full_name}"
                    )
            except MessageIndexError as exc:
                error = exc
            self._checked[key] = error
        return self._checked[key]

    def decode_group(
        self, payloads: Sequence[bytes], writer_schema: str, references: Sequence[tuple[str, str]] = ()
    ) -> list[Any | Exception]:
        """Each payload decoded (a dict) or the exception that refused it; same order."""
        parse = self._class.FromString
        convert = self._convert
        writer = self.writer_schema(writer_schema, references)
        first_ok = self._check(writer_schema, writer, [0])
        bodies: list[bytes] = []
        failed: dict[int, Exception] = {}
        for i, p in enumerate(payloads):
            if p[:1] == b"\x00" and first_ok is None:  # the common case: the first message
                bodies.append(p[1:])
                continue
            try:
                indexes, pos = decode_message_indexes(p)
                error = self._check(writer_schema, writer, indexes)
            except MessageIndexError as exc:
                error = exc
            if error is not None:
                failed[i] = error
                bodies.append(b"")
            else:
                bodies.append(p[pos:])
        if failed:
            return [failed[i] if i in failed else self._one(body) for i, body in enumerate(bodies)]
        try:
            return [convert(parse(b)) for b in bodies]
        except Exception:  # noqa: BLE001 - find the failing records one by one below
            pass
        return [self._one(b) for b in bodies]

    def _one(self, body: bytes) -> Any:
        try:
            return self._convert(self._class.FromString(body))
        except Exception as exc:  # noqa: BLE001 - the caller applies the parse mode
            return exc

    def to_arrow(self, values: list[Any]) -> pa.Array:
        """The Arrow array of decoded values (``None`` for null rows)."""
        arr = pa.array(values, self._wire_type)
        if arr.type == self.arrow_type:
            return arr
        return pc.cast(arr, self.arrow_type, safe=False)
