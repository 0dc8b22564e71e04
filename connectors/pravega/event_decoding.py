"""Decoding Pravega's event framing into Arrow columns, in bulk.

A segment holds events framed as ``int32 type (0)`` + ``int32 length`` + payload. Event
boundaries form a chain, so finding them is sequential; when every event of a buffer has the
same size (the common case for one writer) the chain is checked with one vectorised comparison
of all headers at that stride (each 8-byte header read as one integer), which is exactly the
sequential parse. Payloads are then gathered with numpy into one Arrow ``binary`` array (no
per-event Python objects). The decoded arrays never refer to the input buffer, so a reader may
reuse it for its next read.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from connector_base import MalformedRecordError

__all__ = ["DecodedEvents", "EVENT_HEADER_BYTES", "const_string_array", "decode_events", "event_boundaries"]

EVENT_HEADER_BYTES = 8
EVENT_TYPE = 0
MAX_EVENT_BYTES = 8 * 1024 * 1024
"""Pravega's largest event; a longer length means the position is not an event boundary."""
_HEADER = struct.Struct(">ii")


@dataclass(frozen=True, slots=True)
class DecodedEvents:
    """Whole events of a buffer: payloads, their offsets in the segment, and bytes consumed."""

    payloads: pa.Array
    offsets: np.ndarray
    consumed: int


def _malformed(where: str, pos: int, type_code: int, length: int) -> MalformedRecordError:
    return MalformedRecordError(
        f"{where}: no event header at offset {pos} (type {type_code}, length {length}); "
        "the position is not an event boundary or the segment is not an event stream"
    )


def decode_events(
    buf: bytes | bytearray | memoryview, base_offset: int, where: str = "segment"
) -> DecodedEvents:
    """Decode the whole events at the start of ``buf`` (which starts at an event boundary).

    ``base_offset`` is the segment offset of ``buf[0]``; a trailing partial event is left
    (``consumed`` says where it starts). The result holds copies: ``buf`` may be overwritten after.
    """
    n = len(buf)
    if n < EVENT_HEADER_BYTES:
        return DecodedEvents(pa.array([], pa.binary()), np.empty(0, np.int64), 0)
    type_code, length = _HEADER.unpack_from(buf, 0)
    if type_code != EVENT_TYPE or not 0 <= length <= MAX_EVENT_BYTES:
        raise _malformed(where, base_offset, type_code, length)
    stride = length + EVENT_HEADER_BYTES
    count = n // stride
    raw = np.frombuffer(buf, dtype=np.uint8)
    if count >= 1:
        # every header at the stride, each read as one (unaligned) 8-byte integer
        headers = np.ndarray((count,), dtype=np.uint64, buffer=raw, strides=(stride,))
        (pattern,) = np.frombuffer(_HEADER.pack(EVENT_TYPE, length), dtype=np.uint64)
        if bool((headers == pattern).all()):
            rest = n - count * stride
            tail_is_partial = rest < EVENT_HEADER_BYTES or _next_is_partial(buf, count * stride)
            if tail_is_partial:
                rows = raw[: count * stride].reshape(count, stride)
                values = rows[:, EVENT_HEADER_BYTES:].copy().reshape(-1)  # a copy even of one row
                offsets = np.arange(count + 1, dtype=np.int32) * np.int32(length)
                payloads = pa.Array.from_buffers(
                    pa.binary(), count, [None, pa.py_buffer(offsets), pa.py_buffer(values)]
                )
                positions = base_offset + np.arange(count, dtype=np.int64) * stride
                return DecodedEvents(payloads, positions, count * stride)
    return _decode_chain(buf, raw, base_offset, where)


def _next_is_partial(buf: bytes | bytearray | memoryview, pos: int) -> bool:
    type_code, length = _HEADER.unpack_from(buf, pos)
    if type_code != EVENT_TYPE or not 0 <= length <= MAX_EVENT_BYTES:
        return False  # let the chain parser raise with the right offset
    return bool(pos + EVENT_HEADER_BYTES + length > len(buf))


def event_boundaries(
    buf: bytes | bytearray | memoryview, base_offset: int, where: str = "segment"
) -> list[int]:
    """Offsets (in the segment) of the whole events at the start of ``buf``, plus the end of the last."""
    n = len(buf)
    pos = 0
    out = []
    unpack = _HEADER.unpack_from
    while pos + EVENT_HEADER_BYTES <= n:
        type_code, length = unpack(buf, pos)
        if type_code != EVENT_TYPE or not 0 <= length <= MAX_EVENT_BYTES:
            raise _malformed(where, base_offset + pos, type_code, length)
        if pos + EVENT_HEADER_BYTES + length > n:
            break
        out.append(base_offset + pos)
        pos += EVENT_HEADER_BYTES + length
    out.append(base_offset + pos)
    return out


def _decode_chain(
    buf: bytes | bytearray | memoryview, raw: np.ndarray, base_offset: int, where: str
) -> DecodedEvents:
    n = len(buf)
    starts: list[int] = []
    lengths: list[int] = []
    pos = 0
    unpack = _HEADER.unpack_from
    while pos + EVENT_HEADER_BYTES <= n:
        type_code, length = unpack(buf, pos)
        if type_code != EVENT_TYPE or not 0 <= length <= MAX_EVENT_BYTES:
            raise _malformed(where, base_offset + pos, type_code, length)
        if pos + EVENT_HEADER_BYTES + length > n:
            break
        starts.append(pos)
        lengths.append(length)
        pos += EVENT_HEADER_BYTES + length
    count = len(starts)
    if count == 0:
        return DecodedEvents(pa.array([], pa.binary()), np.empty(0, np.int64), 0)
    starts_np = np.asarray(starts, dtype=np.int64)
    mask = np.ones(pos, dtype=bool)
    mask[(starts_np[:, None] + np.arange(EVENT_HEADER_BYTES)).reshape(-1)] = False
    values = raw[:pos][mask]
    offsets = np.zeros(count + 1, dtype=np.int32)
    offsets[1:] = np.cumsum(np.asarray(lengths, dtype=np.int64))
    payloads = pa.Array.from_buffers(pa.binary(), count, [None, pa.py_buffer(offsets), pa.py_buffer(values)])
    return DecodedEvents(payloads, starts_np + base_offset, pos)


def const_string_array(value: str, count: int) -> pa.Array:
    """A ``string`` array repeating ``value`` (built from buffers, no per-row objects)."""
    raw = value.encode()
    offsets = np.arange(count + 1, dtype=np.int32) * np.int32(len(raw))
    return pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(raw * count)])
