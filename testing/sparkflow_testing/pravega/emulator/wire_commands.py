"""Codec for the Pravega segment store's TCP wire protocol, as spoken by the official clients.

Framing: every command is ``int32 type code`` + ``int32 body length`` + body, big-endian. Bodies
are fixed sequences of fields, encoded as:

=========  ==================================================================
``i32``    4-byte signed big-endian integer (``u8``: one byte; ``bool``: one byte 0/1)
``i64``    8-byte signed big-endian integer
``u128``   16-byte unsigned big-endian integer (writer ids)
``str``    uint16 byte length + UTF-8 bytes
``bytes``  uint32 byte length + bytes
``i64s``   uint32 count + that many ``i64``; ``strs``: uint32 count + ``str`` each
``keys``   uint32 count + table keys (``i32`` payload size, ``bytes`` key, ``i64`` version)
``entries`` uint32 count + (table key, table value) pairs; a value is ``i32`` payload + ``bytes``
``event``  ``i32`` type code 0 + ``bytes`` (an event embedded in ConditionalAppend)
=========  ==================================================================

Each command is a frozen dataclass with ``TYPE_CODE`` and ``FIELDS``; :func:`encode` builds a frame
and :func:`decode` parses a body given its type code. Events inside append data are stored in
segments framed as ``int32 0`` + ``int32 length`` + payload (see :func:`frame_event`).
"""

from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = [
    "HEADER_SIZE",
    "MAX_COMMAND_SIZE",
    "WIRE_VERSION",
    "OLDEST_COMPATIBLE_VERSION",
    "KEY_NO_VERSION",
    "KEY_NOT_EXISTS",
    "NO_OFFSET",
    "TableKey",
    "TableValue",
    "WireCommand",
    "WireProtocolError",
    "COMMANDS",
    "encode",
    "decode",
    "frame_event",
    "split_events",
]

HEADER_SIZE = 8
MAX_COMMAND_SIZE = 0x00FF_FFFF
WIRE_VERSION = 15
OLDEST_COMPATIBLE_VERSION = 5
EVENT_TYPE_CODE = 0
KEY_NO_VERSION = -(2**63)  # unconditional table update
KEY_NOT_EXISTS = -1  # table update only if the key is absent
NO_OFFSET = -1  # table update not conditioned on the table segment's length


class WireProtocolError(ValueError):
    """A frame or body that does not follow the wire protocol."""


@dataclass(frozen=True, slots=True)
class TableKey:
    """A table segment key with its version (a ``KEY_*`` sentinel or the entry's offset)."""

    data: bytes
    version: int = KEY_NO_VERSION


@dataclass(frozen=True, slots=True)
class TableValue:
    """A table segment value."""

    data: bytes


@dataclass(frozen=True)
class WireCommand:
    """Base of all commands; subclasses set ``TYPE_CODE`` and ``FIELDS`` (name, kind) pairs."""

    TYPE_CODE: ClassVar[int] = 0
    FIELDS: ClassVar[tuple[tuple[str, str], ...]] = ()


class _Reader:
    def __init__(self, body: bytes) -> None:
        self._buf = memoryview(body)
        self._pos = 0

    def _take(self, n: int) -> bytes:
        if self._pos + n > len(self._buf):
            raise WireProtocolError(f"body too short: need {n} bytes at {self._pos}, have {len(self._buf)}")
        out = bytes(self._buf[self._pos : self._pos + n])
        self._pos += n
        return out

    def read(self, kind: str) -> Any:
        match kind:
            case "i32":
                return struct.unpack(">i", self._take(4))[0]
            case "i64":
                return struct.unpack(">q", self._take(8))[0]
            case "u8":
                return self._take(1)[0]
            case "bool":
                return self._take(1)[0] != 0
            case "u128":
                return int.from_bytes(self._take(16), "big")
            case "str":
                (n,) = struct.unpack(">H", self._take(2))
                return self._take(n).decode("utf-8")
            case "bytes":
                (n,) = struct.unpack(">I", self._take(4))
                return self._take(n)
            case "i64s":
                (n,) = struct.unpack(">I", self._take(4))
                return tuple(self.read("i64") for _ in range(n))
            case "strs":
                (n,) = struct.unpack(">I", self._take(4))
                return tuple(self.read("str") for _ in range(n))
            case "keys":
                (n,) = struct.unpack(">I", self._take(4))
                return tuple(self._read_key() for _ in range(n))
            case "entries":
                (n,) = struct.unpack(">I", self._take(4))
                return tuple((self._read_key(), self._read_value()) for _ in range(n))
            case "event":
                type_code = self.read("i32")
                if type_code != EVENT_TYPE_CODE:
                    raise WireProtocolError(f"expected an Event (type 0) inside the command, got {type_code}")
                return self.read("bytes")
        raise WireProtocolError(f"unknown field kind {kind!r}")

    def _read_key(self) -> TableKey:
        self.read("i32")  # payload size, implied by the fields
        data = self.read("bytes")
        return TableKey(data, self.read("i64"))

    def _read_value(self) -> TableValue:
        self.read("i32")
        return TableValue(self.read("bytes"))

    def done(self) -> bool:
        return self._pos == len(self._buf)


def _write(out: bytearray, kind: str, value: Any) -> None:
    match kind:
        case "i32":
            out += struct.pack(">i", value)
        case "i64":
            out += struct.pack(">q", value)
        case "u8":
            out += struct.pack(">B", value)
        case "bool":
            out += b"\x01" if value else b"\x00"
        case "u128":
            out += int(value).to_bytes(16, "big")
        case "str":
            raw = value.encode("utf-8")
            out += struct.pack(">H", len(raw)) + raw
        case "bytes":
            out += struct.pack(">I", len(value)) + bytes(value)
        case "i64s":
            out += struct.pack(">I", len(value))
            for item in value:
                _write(out, "i64", item)
        case "strs":
            out += struct.pack(">I", len(value))
            for item in value:
                _write(out, "str", item)
        case "keys":
            out += struct.pack(">I", len(value))
            for key in value:
                _write_key(out, key)
        case "entries":
            out += struct.pack(">I", len(value))
            for key, val in value:
                _write_key(out, key)
                out += struct.pack(">iI", len(val.data) + 4, len(val.data)) + val.data
        case "event":
            out += struct.pack(">iI", EVENT_TYPE_CODE, len(value)) + bytes(value)
        case _:
            raise WireProtocolError(f"unknown field kind {kind!r}")


def _write_key(out: bytearray, key: TableKey) -> None:
    out += (
        struct.pack(">iI", 4 + len(key.data) + 8, len(key.data)) + key.data + struct.pack(">q", key.version)
    )


COMMANDS: dict[int, type[WireCommand]] = {}


def _command(type_code: int, name: str, spec: str) -> type[WireCommand]:
    fields = tuple(tuple(item.split(":")) for item in spec.split())
    cls = dataclasses.make_dataclass(
        name,
        [(field, Any) for field, _kind in fields],
        bases=(WireCommand,),
        frozen=True,
        namespace={
            "TYPE_CODE": type_code,
            "FIELDS": fields,
            "__doc__": f"Wire command {name} ({type_code}).",
        },
    )
    cls.__module__ = __name__
    COMMANDS[type_code] = cls
    return cls


# Connection.
Hello = _command(-127, "Hello", "high_version:i32 low_version:i32")
KeepAlive = _command(100, "KeepAlive", "")
Padding = _command(-1, "Padding", "length:i32")
# Appends.
SetupAppend = _command(1, "SetupAppend", "request_id:i64 writer_id:u128 segment:str delegation_token:str")
AppendSetup = _command(2, "AppendSetup", "request_id:i64 segment:str writer_id:u128 last_event_number:i64")
AppendBlock = _command(3, "AppendBlock", "writer_id:u128 data:bytes")
AppendBlockEnd = _command(
    4,
    "AppendBlockEnd",
    "writer_id:u128 size_of_whole_events:i32 data:bytes num_event:i32 last_event_number:i64 request_id:i64",
)
ConditionalAppend = _command(
    5, "ConditionalAppend", "writer_id:u128 event_number:i64 expected_offset:i64 event:event request_id:i64"
)
DataAppended = _command(
    7,
    "DataAppended",
    "writer_id:u128 event_number:i64 previous_event_number:i64 request_id:i64 "
    "current_segment_write_offset:i64",
)
ConditionalCheckFailed = _command(
    8, "ConditionalCheckFailed", "writer_id:u128 event_number:i64 request_id:i64"
)
ConditionalBlockEnd = _command(
    89, "ConditionalBlockEnd", "writer_id:u128 event_number:i64 expected_offset:i64 data:bytes request_id:i64"
)
CreateTransientSegment = _command(
    40, "CreateTransientSegment", "request_id:i64 writer_id:u128 segment:str delegation_token:str"
)
# Reads and segment metadata.
ReadSegment = _command(
    9, "ReadSegment", "segment:str offset:i64 suggested_length:i32 delegation_token:str request_id:i64"
)
SegmentRead = _command(
    10, "SegmentRead", "segment:str offset:i64 at_tail:bool end_of_segment:bool data:bytes request_id:i64"
)
GetStreamSegmentInfo = _command(
    11, "GetStreamSegmentInfo", "request_id:i64 segment_name:str delegation_token:str"
)
StreamSegmentInfo = _command(
    12,
    "StreamSegmentInfo",
    "request_id:i64 segment_name:str exists:bool is_sealed:bool is_deleted:bool last_modified:i64 "
    "write_offset:i64 start_offset:i64",
)
CreateSegment = _command(
    20, "CreateSegment", "request_id:i64 segment:str target_rate:i32 scale_type:u8 delegation_token:str"
)
SegmentCreated = _command(21, "SegmentCreated", "request_id:i64 segment:str")
SealSegment = _command(28, "SealSegment", "request_id:i64 segment:str delegation_token:str")
SegmentSealed = _command(29, "SegmentSealed", "request_id:i64 segment:str")
DeleteSegment = _command(30, "DeleteSegment", "request_id:i64 segment:str delegation_token:str")
SegmentDeleted = _command(31, "SegmentDeleted", "request_id:i64 segment:str")
UpdateSegmentPolicy = _command(
    32, "UpdateSegmentPolicy", "request_id:i64 segment:str target_rate:i32 scale_type:u8 delegation_token:str"
)
SegmentPolicyUpdated = _command(33, "SegmentPolicyUpdated", "request_id:i64 segment:str")
GetSegmentAttribute = _command(
    34, "GetSegmentAttribute", "request_id:i64 segment_name:str attribute_id:u128 delegation_token:str"
)
SegmentAttribute = _command(35, "SegmentAttribute", "request_id:i64 value:i64")
UpdateSegmentAttribute = _command(
    36,
    "UpdateSegmentAttribute",
    "request_id:i64 segment_name:str attribute_id:u128 new_value:i64 expected_value:i64 delegation_token:str",
)
SegmentAttributeUpdated = _command(37, "SegmentAttributeUpdated", "request_id:i64 success:bool")
TruncateSegment = _command(
    38, "TruncateSegment", "request_id:i64 segment:str truncation_offset:i64 delegation_token:str"
)
SegmentTruncated = _command(39, "SegmentTruncated", "request_id:i64 segment:str")
MergeSegments = _command(58, "MergeSegments", "request_id:i64 target:str source:str delegation_token:str")
SegmentsMerged = _command(
    59, "SegmentsMerged", "request_id:i64 target:str source:str new_target_write_offset:i64"
)
# Errors.
WrongHost = _command(50, "WrongHost", "request_id:i64 segment:str correct_host:str server_stack_trace:str")
SegmentIsSealed = _command(
    51, "SegmentIsSealed", "request_id:i64 segment:str server_stack_trace:str offset:i64"
)
SegmentAlreadyExists = _command(
    52, "SegmentAlreadyExists", "request_id:i64 segment:str server_stack_trace:str"
)
NoSuchSegment = _command(53, "NoSuchSegment", "request_id:i64 segment:str server_stack_trace:str offset:i64")
InvalidEventNumber = _command(
    55, "InvalidEventNumber", "writer_id:u128 event_number:i64 server_stack_trace:str"
)
SegmentIsTruncated = _command(
    56, "SegmentIsTruncated", "request_id:i64 segment:str start_offset:i64 server_stack_trace:str offset:i64"
)
OperationUnsupported = _command(
    57, "OperationUnsupported", "request_id:i64 operation_name:str server_stack_trace:str"
)
AuthTokenCheckFailed = _command(
    60, "AuthTokenCheckFailed", "request_id:i64 server_stack_trace:str error_code:i32"
)
ErrorMessage = _command(61, "ErrorMessage", "request_id:i64 segment:str message:str error_code:i32")
# Table segments.
GetTableSegmentInfo = _command(
    68, "GetTableSegmentInfo", "request_id:i64 segment_name:str delegation_token:str"
)
CreateTableSegment = _command(70, "CreateTableSegment", "request_id:i64 segment:str delegation_token:str")
DeleteTableSegment = _command(
    71, "DeleteTableSegment", "request_id:i64 segment:str must_be_empty:bool delegation_token:str"
)
MergeTableSegments = _command(
    72, "MergeTableSegments", "request_id:i64 target:str source:str delegation_token:str"
)
SealTableSegment = _command(73, "SealTableSegment", "request_id:i64 segment:str delegation_token:str")
UpdateTableEntries = _command(
    74,
    "UpdateTableEntries",
    "request_id:i64 segment:str delegation_token:str table_entries:entries table_segment_offset:i64",
)
TableEntriesUpdated = _command(75, "TableEntriesUpdated", "request_id:i64 updated_versions:i64s")
RemoveTableKeys = _command(
    76,
    "RemoveTableKeys",
    "request_id:i64 segment:str delegation_token:str keys:keys table_segment_offset:i64",
)
TableKeysRemoved = _command(77, "TableKeysRemoved", "request_id:i64 segment:str")
ReadTable = _command(78, "ReadTable", "request_id:i64 segment:str delegation_token:str keys:keys")
TableRead = _command(79, "TableRead", "request_id:i64 segment:str entries:entries")
TableSegmentNotEmpty = _command(
    80, "TableSegmentNotEmpty", "request_id:i64 segment:str server_stack_trace:str"
)
TableKeyDoesNotExist = _command(
    81, "TableKeyDoesNotExist", "request_id:i64 segment:str server_stack_trace:str"
)
TableKeyBadVersion = _command(82, "TableKeyBadVersion", "request_id:i64 segment:str server_stack_trace:str")
ReadTableKeys = _command(
    83,
    "ReadTableKeys",
    "request_id:i64 segment:str delegation_token:str suggested_key_count:i32 continuation_token:bytes",
)
TableKeysRead = _command(84, "TableKeysRead", "request_id:i64 segment:str keys:keys continuation_token:bytes")
ReadTableEntries = _command(
    85,
    "ReadTableEntries",
    "request_id:i64 segment:str delegation_token:str suggested_entry_count:i32 continuation_token:bytes",
)
TableEntriesRead = _command(
    86, "TableEntriesRead", "request_id:i64 segment:str entries:entries continuation_token:bytes"
)
TableEntriesDeltaRead = _command(
    87,
    "TableEntriesDeltaRead",
    "request_id:i64 segment:str entries:entries should_clear:bool reached_end:bool last_position:i64",
)
ReadTableEntriesDelta = _command(
    88,
    "ReadTableEntriesDelta",
    "request_id:i64 segment:str delegation_token:str from_position:i64 suggested_entry_count:i32",
)
TableSegmentInfo = _command(69, "TableSegmentInfo", "request_id:i64 segment_name:str delegation_token:str")


__all__ += ["parse_header", *(cls.__name__ for cls in COMMANDS.values())]


def encode_parts(command: WireCommand) -> list[bytes | bytearray | memoryview]:
    """Encode ``command`` as a frame in pieces: large ``bytes`` fields (segment data) are not copied.

    The pieces are meant for one ``writelines`` call; a payload is referenced, so it must not change
    until it has been written.
    """
    parts: list[bytes | bytearray | memoryview] = []
    body = bytearray()
    size = 0
    for name, kind in command.FIELDS:
        value = getattr(command, name)
        if kind == "bytes" and len(value) > 4096:
            body += struct.pack(">I", len(value))
            parts.append(body)
            parts.append(value)
            size += len(body) + len(value)
            body = bytearray()
        else:
            _write(body, kind, value)
    parts.append(body)
    size += len(body)
    if size > MAX_COMMAND_SIZE:
        raise WireProtocolError(f"{type(command).__name__} body of {size} bytes exceeds {MAX_COMMAND_SIZE}")
    return [struct.pack(">ii", command.TYPE_CODE, size), *parts]


def encode(command: WireCommand) -> bytes:
    """Encode ``command`` as a complete frame (header and body)."""
    return b"".join(encode_parts(command))


def parse_header(header: bytes) -> tuple[int, int]:
    """Return ``(type_code, body_length)`` from an 8-byte frame header, validating the length."""
    type_code, length = struct.unpack(">ii", header)
    if length < 0 or length > MAX_COMMAND_SIZE:
        raise WireProtocolError(f"frame length {length} out of range for type {type_code}")
    return type_code, length


def decode(type_code: int, body: bytes) -> WireCommand:
    """Decode the body of a frame of ``type_code``; raise :class:`KeyError` for unknown codes."""
    cls = COMMANDS[type_code]
    reader = _Reader(body)
    values = {name: reader.read(kind) for name, kind in cls.FIELDS}
    return cls(**values)


def frame_event(payload: bytes) -> bytes:
    """Frame one event as stored in a segment: ``int32 0`` + ``int32 length`` + payload."""
    return struct.pack(">ii", EVENT_TYPE_CODE, len(payload)) + payload


def split_events(data: bytes) -> list[bytes]:
    """Split segment bytes made only of whole framed events into their payloads."""
    events = []
    pos = 0
    while pos < len(data):
        type_code, length = struct.unpack_from(">ii", data, pos)
        if type_code != EVENT_TYPE_CODE or pos + 8 + length > len(data):
            raise WireProtocolError(f"no whole event at offset {pos}")
        events.append(bytes(data[pos + 8 : pos + 8 + length]))
        pos += 8 + length
    return events
