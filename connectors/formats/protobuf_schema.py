"""Protobuf schemas from a registry: ``.proto`` text or a serialized descriptor -> message descriptors.

A registry holds a Protobuf schema in one of two forms: the ``.proto`` text (what users register by
hand, and what Apicurio 2.6 returns even for ``?format=serialized``), or a base64
``FileDescriptorProto`` (what confluent-kafka's own ``ProtobufSerializer`` registers). Both are
accepted. Text is compiled at run time by ``protoc`` itself, in-process, through ``grpcio-tools``
(``grpc_tools.protoc``): the reference compiler gives exactly the descriptors ``protoc
--descriptor_set_out`` gives a Spark user for ``from_protobuf`` (name scoping, map entries, proto3
``optional``, ``oneof``, imports, options), where a pure-Python parser such as
``proto-schema-parser`` returns an AST and would leave name resolution, map-entry synthesis and
validation to hand-written code here. grpcio-tools ships wheels for CPython 3.11-3.13 and its
bundled include directory carries the well-known types (``google/protobuf/*.proto``). Compiling a
schema takes a few milliseconds and is done once per schema id and process.

Each compiled schema gets its own ``DescriptorPool`` (two versions of a subject define the same
full names). Imports resolve to: the well-known types (always present), and the schema's
registry references (``name`` -> subject and version), fetched and compiled with it.

The wire format's message indexes (after magic byte and schema id): a zig-zag varint count, then
that many zig-zag varint indexes (the path from a top-level message through nested ones); the
single byte ``0`` stands for ``[0]``, the file's first message.

Threading: ``ProtoSchema`` objects are immutable after construction; compile calls are serialized
by a lock (protoc's in-process entry point is not documented as re-entrant).
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from connector_base import ConnectorError

__all__ = [
    "ProtoSchema",
    "ProtobufSchemaError",
    "decode_message_indexes",
    "encode_message_indexes",
    "is_serialized_descriptor",
    "map_entries_in_wire_order",
]

MAIN_FILE = "registry_schema.proto"
_BASE64 = re.compile(r"^[A-Za-z0-9+/\s]+={0,2}\s*$")
_COMPILE_LOCK = threading.Lock()


class ProtobufSchemaError(ConnectorError):
    """A Protobuf schema that does not compile, or a message that is not in it."""


class MessageIndexError(ValueError):
    """The message indexes after the header are truncated or name no message of the writer schema."""


def is_serialized_descriptor(text: str) -> bool:
    """Whether ``text`` is a base64 ``FileDescriptorProto`` (Confluent's serialized form), not text."""
    return bool(text.strip()) and _BASE64.match(text) is not None


def _well_known_files() -> list[bytes]:
    from google.protobuf import (
        any_pb2,
        api_pb2,
        descriptor_pb2,
        duration_pb2,
        empty_pb2,
        field_mask_pb2,
        source_context_pb2,
        struct_pb2,
        timestamp_pb2,
        type_pb2,
        wrappers_pb2,
    )

    mods = (any_pb2, source_context_pb2, type_pb2, api_pb2, descriptor_pb2, duration_pb2, empty_pb2)
    mods += (field_mask_pb2, struct_pb2, timestamp_pb2, wrappers_pb2)
    return [m.DESCRIPTOR.serialized_pb for m in mods]


def _include_dir() -> str:
    import grpc_tools

    return os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")


def _compile_text(files: dict[str, str], main: str) -> list[Any]:
    """``protoc`` on ``files`` (name -> ``.proto`` text): ``main``'s and its imports' descriptors."""
    from google.protobuf import descriptor_pb2
    from grpc_tools import _protoc_compiler, protoc

    with tempfile.TemporaryDirectory(prefix="sparkflow-proto-") as tmp:
        for name, text in files.items():
            path = os.path.join(tmp, name)
            if os.path.dirname(path) != tmp:
                os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as out:
                out.write(text)
        out_path = os.path.join(tmp, ".descriptor_set")
        args = ["protoc", f"-I{tmp}", f"-I{_include_dir()}", "--include_imports"]
        with _COMPILE_LOCK:
            code = protoc.main([*args, f"--descriptor_set_out={out_path}", main])
            if code != 0:
                try:  # the same compile through the entry point that returns its errors
                    _protoc_compiler.get_protos(main.encode(), [tmp.encode(), _include_dir().encode()])
                except _protoc_compiler.ProtocErrors as exc:
                    first = exc.errors()[0]
                    where = f"{_text(first.filename)}:{first.line + 1}:{first.column + 1}"
                    raise ProtobufSchemaError(
                        f"the Protobuf schema does not compile: {where}: {_text(first.message)}"
                    ) from None
                raise ProtobufSchemaError(f"the Protobuf schema does not compile (protoc exit code {code})")
        with open(out_path, "rb") as f:
            return list(descriptor_pb2.FileDescriptorSet.FromString(f.read()).file)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _parse_serialized(text: str, name: str) -> Any:
    from google.protobuf import descriptor_pb2
    from google.protobuf.message import DecodeError

    try:
        return descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode("".join(text.split())))
    except (binascii.Error, DecodeError) as exc:
        raise ProtobufSchemaError(
            f"schema {name} is neither .proto text nor a base64 FileDescriptorProto: {exc}"
        ) from None


@dataclass(frozen=True)
class ProtoSchema:
    """One compiled schema: its pool and file descriptor."""

    pool: Any
    file: Any

    @property
    def top_messages(self) -> list[Any]:
        """The file's top-level messages in declaration order (the order message indexes count)."""
        from google.protobuf import descriptor_pb2

        proto = descriptor_pb2.FileDescriptorProto()
        self.file.CopyToProto(proto)
        by_name = self.file.message_types_by_name
        return [by_name[m.name] for m in proto.message_type]

    @classmethod
    def compile(cls, text: str, references: Sequence[tuple[str, str]] = ()) -> ProtoSchema:
        """Compile ``text`` with ``references`` (import name -> schema text, dependencies first)."""
        from google.protobuf import descriptor_pool

        pool = descriptor_pool.DescriptorPool()
        for serialized in _well_known_files():
            pool.AddSerializedFile(serialized)
        added = {f.name for f in (pool.FindFileByName(n) for n in _WKT_NAMES)}
        texts = {name: t for name, t in references if not is_serialized_descriptor(t)}
        protos: list[Any] = []
        for name, ref_text in references:
            if is_serialized_descriptor(ref_text):
                proto = _parse_serialized(ref_text, f"reference {name!r}")
                proto.name = name
                protos.append(proto)
        if is_serialized_descriptor(text):
            main = _parse_serialized(text, "the schema")
            for name in texts:  # text references of a serialized schema: compiled on their own
                protos.extend(_compile_text(texts, name))
            protos.append(main)
            main_name = main.name
        else:
            serialized_refs = [n for n, t in references if is_serialized_descriptor(t)]
            if serialized_refs:
                raise ProtobufSchemaError(
                    f"the .proto text imports {serialized_refs[0]!r}, registered as a serialized "
                    "descriptor: a .proto text schema can import .proto text references only"
                )
            protos.extend(_compile_text({**texts, MAIN_FILE: text}, MAIN_FILE))
            main_name = MAIN_FILE
        try:
            for proto in protos:
                if proto.name not in added:
                    pool.AddSerializedFile(proto.SerializeToString())
                    added.add(proto.name)
            return cls(pool, pool.FindFileByName(main_name))
        except (TypeError, KeyError, ValueError) as exc:
            raise ProtobufSchemaError(f"the Protobuf schema's descriptors do not link: {exc}") from None

    def message_by_indexes(self, indexes: Sequence[int]) -> Any:
        """The message at ``indexes`` (top-level index, then nested), or ``MessageIndexError``."""
        if not indexes:
            raise MessageIndexError("an empty message index list")
        top = self.top_messages
        if not 0 <= indexes[0] < len(top):
            raise MessageIndexError(
                f"message index {indexes[0]} is out of range: the writer schema has "
                f"{len(top)} top-level messages"
            )
        message = top[indexes[0]]
        for i in indexes[1:]:
            nested = message.nested_types
            if not 0 <= i < len(nested):
                raise MessageIndexError(
                    f"nested message index {i} is out of range: {message.full_name} has {len(nested)}"
                )
            message = nested[i]
        return message

    def message(self, name: str | None) -> Any:
        """The message ``name`` (full or simple name); the file's first message when ``None``."""
        top = self.top_messages
        if name is None:
            if not top:
                raise ProtobufSchemaError("the Protobuf schema defines no message")
            return top[0]
        candidates = [name, f"{self.file.package}.{name}" if self.file.package else name]
        for full in candidates:
            try:
                desc = self.pool.FindMessageTypeByName(full)
            except KeyError:
                continue
            if desc.file.name == self.file.name:
                return desc
        known = ", ".join(_all_messages(top)) or "none"
        raise ProtobufSchemaError(f"the Protobuf schema has no message {name!r} (messages: {known})")

    def indexes_of(self, message: Any) -> list[int]:
        """The message-index path of ``message`` in this file (inverse of ``message_by_indexes``)."""
        path: list[int] = []
        while message.containing_type is not None:
            parent = message.containing_type
            path.append(list(parent.nested_types).index(message))
            message = parent
        path.append(self.top_messages.index(message))
        return path[::-1]


_WKT_NAMES = (
    "google/protobuf/any.proto",
    "google/protobuf/source_context.proto",
    "google/protobuf/type.proto",
    "google/protobuf/api.proto",
    "google/protobuf/descriptor.proto",
    "google/protobuf/duration.proto",
    "google/protobuf/empty.proto",
    "google/protobuf/field_mask.proto",
    "google/protobuf/struct.proto",
    "google/protobuf/timestamp.proto",
    "google/protobuf/wrappers.proto",
)


def map_entries_in_wire_order(message: Any) -> Any:
    """``message`` again, in a pool of its own where every map field is a repeated entry message.

    The protobuf runtime keeps a map field in a hash table and iterates it in the table's order, so
    the entries' order on the wire (what Spark's ``from_protobuf`` and the native decoder keep) is
    lost, and it differs between processes. Parsed with this copy, the same bytes give the entries
    as a list in wire order (duplicate keys included); the wire format of a map is exactly that of
    a repeated entry message, so nothing else changes.
    """
    from google.protobuf import descriptor_pb2, descriptor_pool

    def unmap(messages: Any) -> None:
        for m in messages:
            m.options.ClearField("map_entry")
            unmap(m.nested_type)

    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(file: Any) -> None:
        if file.name in added:
            return
        for dep in file.dependencies:
            add(dep)
        proto = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(proto)
        unmap(proto.message_type)
        pool.AddSerializedFile(proto.SerializeToString())
        added.add(file.name)

    add(message.file)
    return pool.FindMessageTypeByName(message.full_name)


def _all_messages(messages: Sequence[Any]) -> list[str]:
    out: list[str] = []
    for m in messages:
        out.append(m.full_name)
        out.extend(_all_messages(m.nested_types))
    return out


def _read_zigzag(data: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if pos >= len(data):
            raise MessageIndexError("the message indexes after the schema id are truncated")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 63:
            raise MessageIndexError("a message index varint is longer than 10 bytes")
    return (result >> 1) ^ -(result & 1), pos


def decode_message_indexes(data: bytes, pos: int = 0) -> tuple[list[int], int]:
    """The message indexes starting at ``pos`` and the position after them (``[0]`` for the byte 0)."""
    count, pos = _read_zigzag(data, pos)
    if count == 0:
        return [0], pos
    if count < 0 or count > 100:
        raise MessageIndexError(f"message index count {count} is not valid")
    indexes = []
    for _ in range(count):
        value, pos = _read_zigzag(data, pos)
        indexes.append(value)
    return indexes, pos


def _zigzag(value: int) -> bytes:
    n = (value << 1) ^ (value >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_message_indexes(indexes: Sequence[int]) -> bytes:
    """The wire bytes of ``indexes`` (the single byte 0 for ``[0]``)."""
    if list(indexes) == [0]:
        return b"\x00"
    return _zigzag(len(indexes)) + b"".join(_zigzag(i) for i in indexes)
