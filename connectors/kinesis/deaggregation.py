"""De-aggregation of Kinesis Producer Library (KPL) aggregated records.

The KPL packs several user records into one Kinesis record::

    magic 0xF3 0x89 0x9A 0xC2 | protobuf AggregatedRecord | md5(protobuf) (16 bytes)

    message AggregatedRecord { repeated string partition_key_table = 1;
                               repeated string explicit_hash_key_table = 2;
                               repeated Record records = 3; }
    message Record { required uint64 partition_key_index = 1; optional uint64 explicit_hash_key_index = 2;
                     required bytes data = 3; repeated Tag tags = 4; }

A record without the magic prefix, or whose checksum does not match, is a plain record (this is
what the KPL's own de-aggregator does). The protobuf is parsed here by hand (a few wire types), so
no generated code or protobuf runtime is needed.
"""

from __future__ import annotations

import hashlib

__all__ = ["KPL_MAGIC", "aggregate", "deaggregate"]

KPL_MAGIC = b"\xf3\x89\x9a\xc2"
DIGEST_BYTES = 16
_VARINT, _LEN = 0, 2


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(buf: bytes) -> list[tuple[int, int | bytes]]:
    out: list[tuple[int, int | bytes]] = []
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, pos = _varint(buf, pos)
            out.append((number, value))
        elif wire == _LEN:
            length, pos = _varint(buf, pos)
            if pos + length > end:
                raise ValueError("truncated field")
            out.append((number, buf[pos : pos + length]))
            pos += length
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
    return out


def deaggregate(data: bytes, partition_key: str) -> list[tuple[bytes, str]] | None:
    """The user records ``(data, partition key)`` of a KPL aggregated record, or ``None`` if it is not one."""
    if len(data) < len(KPL_MAGIC) + DIGEST_BYTES or not data.startswith(KPL_MAGIC):
        return None
    body = data[len(KPL_MAGIC) : -DIGEST_BYTES]
    if hashlib.md5(body).digest() != data[-DIGEST_BYTES:]:  # the KPL's checksum, not security
        return None
    try:
        keys: list[str] = []
        records: list[tuple[int, bytes]] = []
        for number, value in _fields(body):
            if number == 1 and isinstance(value, bytes):
                keys.append(value.decode("utf-8"))
            elif number == 3 and isinstance(value, bytes):
                key_index, payload = 0, b""
                for n, v in _fields(value):
                    if n == 1 and isinstance(v, int):
                        key_index = v
                    elif n == 3 and isinstance(v, bytes):
                        payload = v
                records.append((key_index, payload))
        return [(payload, keys[i] if i < len(keys) else partition_key) for i, payload in records]
    except (ValueError, IndexError, UnicodeDecodeError):
        return None


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _len_field(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(payload)) + payload


def aggregate(records: list[tuple[bytes, str]]) -> bytes:
    """Pack ``(data, partition key)`` records the way the KPL does (for tests and producers)."""
    keys: list[str] = []
    index: dict[str, int] = {}
    body = bytearray()
    for _data, key in records:
        if key not in index:
            index[key] = len(keys)
            keys.append(key)
    for key in keys:
        body += _len_field(1, key.encode("utf-8"))
    for data, key in records:
        rec = _encode_varint(1 << 3 | _VARINT) + _encode_varint(index[key]) + _len_field(3, data)
        body += _len_field(3, rec)
    return KPL_MAGIC + bytes(body) + hashlib.md5(bytes(body)).digest()
