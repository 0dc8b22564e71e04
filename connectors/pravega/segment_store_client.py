"""``SegmentStoreClient``: reads segments over Pravega's wire protocol (blocking sockets, pipelined).

Only what a reader of committed bytes needs: ``Hello``, ``GetStreamSegmentInfo`` (head, tail,
sealed) and ``ReadSegment`` issued many at a time (up to ``PIPELINE_BYTES`` in flight, replies
matched by request id), so a range is read at the speed of the connection, never one round trip
per event. Reads never go past a known tail, so they never wait in the store's tail long-poll.

Error replies become exceptions: ``SegmentTruncatedError`` (with the new head),
``NoSuchSegmentError``, and ``ConnectorError`` for anything else (wrong host, auth, unsupported).
A connection that ends (closed, reset, no answer within the socket timeout) raises
``SegmentStoreConnectionError`` or ``OSError``: the caller may reconnect and read again.

Threading: one client per thread (a fetcher thread or the driver's planning thread).
"""

from __future__ import annotations

import socket
import ssl
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from connector_base import ConnectorError

__all__ = [
    "NoSuchSegmentError",
    "SegmentStoreConnectionError",
    "WrongHostError",
    "SegmentInfo",
    "SegmentStoreClient",
    "SegmentTruncatedError",
    "MAX_READ_BYTES",
    "tls_context",
]

WIRE_VERSION = 15
OLDEST_COMPATIBLE_VERSION = 5
MAX_READ_BYTES = 1024 * 1024
"""The largest read the segment store answers in one ``SegmentRead``."""
PIPELINE_BYTES = 16 * MAX_READ_BYTES
"""How many bytes of reads are in flight at once on one connection."""
SOCKET_TIMEOUT_S = 30.0

HELLO, KEEP_ALIVE = -127, 100
READ_SEGMENT, SEGMENT_READ = 9, 10
GET_INFO, SEGMENT_INFO = 11, 12
WRONG_HOST, SEGMENT_IS_SEALED, NO_SUCH_SEGMENT = 50, 51, 53
SEGMENT_IS_TRUNCATED, OPERATION_UNSUPPORTED, AUTH_FAILED, ERROR_MESSAGE = 56, 57, 60, 61

_HEADER = struct.Struct(">ii")
_I64 = struct.Struct(">q")


class NoSuchSegmentError(ConnectorError):
    """The segment does not exist (deleted with its stream, or never created)."""

    def __init__(self, segment: str) -> None:
        super().__init__(f"segment {segment} does not exist")
        self.segment = segment


class SegmentStoreConnectionError(ConnectorError):
    """The connection ended before a whole reply arrived (reconnecting may succeed)."""


class WrongHostError(ConnectorError):
    """The store does not own the segment (it moved): ask the controller for its store again."""


class SegmentTruncatedError(ConnectorError):
    """A read below the segment's head: the bytes before ``head`` were truncated."""

    def __init__(self, segment: str, offset: int, head: int) -> None:
        super().__init__(f"segment {segment} is truncated at {head}; offset {offset} is gone")
        self.segment = segment
        self.offset = offset
        self.head = head


@dataclass(frozen=True, slots=True)
class SegmentInfo:
    """``GetStreamSegmentInfo``: first readable offset, write offset (tail) and seal state."""

    name: str
    head: int
    tail: int
    sealed: bool


def tls_context(tls_enabled: bool, trust_store: str | None) -> ssl.SSLContext | None:
    """With ``tls_enabled``, a context trusting ``trust_store`` (else the system's CAs)."""
    if not tls_enabled:
        return None
    return ssl.create_default_context(cafile=trust_store or None)


def _str(value: str) -> bytes:
    raw = value.encode()
    return struct.pack(">H", len(raw)) + raw


class _Body:
    """Sequential field reader over one reply body."""

    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def i64(self) -> int:
        v = _I64.unpack_from(self.buf, self.pos)[0]
        self.pos += 8
        return int(v)

    def i32(self) -> int:
        v = struct.unpack_from(">i", self.buf, self.pos)[0]
        self.pos += 4
        return int(v)

    def boolean(self) -> bool:
        v = self.buf[self.pos] != 0
        self.pos += 1
        return v

    def string(self) -> str:
        (n,) = struct.unpack_from(">H", self.buf, self.pos)
        s = self.buf[self.pos + 2 : self.pos + 2 + n].decode()
        self.pos += 2 + n
        return s

    def data(self) -> memoryview:
        (n,) = struct.unpack_from(">I", self.buf, self.pos)
        start = self.pos + 4
        self.pos = start + n
        return memoryview(self.buf)[start : start + n]


class SegmentStoreClient:
    """One wire-protocol connection to a segment store (see the module docstring)."""

    def __init__(
        self, host: str, port: int, timeout_s: float = SOCKET_TIMEOUT_S, tls: ssl.SSLContext | None = None
    ) -> None:
        self.endpoint = f"{host}:{port}"
        sock = socket.create_connection((host, port), timeout=timeout_s)
        if tls is not None:
            try:
                sock = tls.wrap_socket(sock, server_hostname=host)
            except ssl.SSLError as e:
                sock.close()
                raise ConnectorError(f"TLS handshake with segment store {self.endpoint} failed: {e}") from e
        self._sock = sock
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * MAX_READ_BYTES)
        self._file = self._sock.makefile("rb", buffering=2 * MAX_READ_BYTES)
        self._next_id = 1
        try:
            self._send(HELLO, struct.pack(">ii", WIRE_VERSION, OLDEST_COMPATIBLE_VERSION))
            code, _body = self._receive()
        except BaseException:
            self.close()
            raise
        if code != HELLO:
            raise ConnectorError(f"segment store {self.endpoint} answered Hello with wire command {code}")

    # --- framing --------------------------------------------------------------------------------
    def _send(self, code: int, body: bytes) -> None:
        self._sock.sendall(_HEADER.pack(code, len(body)) + body)

    def _receive(self) -> tuple[int, bytes]:
        while True:
            header = self._file.read(8)
            if len(header) < 8:
                raise SegmentStoreConnectionError(f"segment store {self.endpoint} closed the connection")
            code, length = _HEADER.unpack(header)
            body = self._file.read(length) if length else b""
            if len(body) < length:
                raise SegmentStoreConnectionError(
                    f"segment store {self.endpoint} closed the connection mid-reply"
                )
            if code != KEEP_ALIVE:
                return code, body

    def _request_id(self) -> int:
        rid = self._next_id
        self._next_id += 1
        return rid

    def _error(self, code: int, body: bytes, segment: str, offset: int) -> ConnectorError:
        b = _Body(body)
        b.i64()  # request id
        if code == SEGMENT_IS_TRUNCATED:
            name = b.string()
            head = b.i64()
            return SegmentTruncatedError(name, offset, head)
        if code == NO_SUCH_SEGMENT:
            return NoSuchSegmentError(segment)
        if code == WRONG_HOST:
            return WrongHostError(f"segment store {self.endpoint} answered WrongHost for {segment}@{offset}")
        if code == ERROR_MESSAGE:
            b.string()
            return ConnectorError(f"segment store {self.endpoint} refused {segment}@{offset}: {b.string()}")
        names = {
            WRONG_HOST: "WrongHost",
            SEGMENT_IS_SEALED: "SegmentIsSealed",
            OPERATION_UNSUPPORTED: "OperationUnsupported",
            AUTH_FAILED: "AuthTokenCheckFailed",
        }
        return ConnectorError(
            f"segment store {self.endpoint} answered {names.get(code, code)} for {segment}@{offset}"
        )

    # --- requests -------------------------------------------------------------------------------
    def info(self, segment: str, token: str = "") -> SegmentInfo:
        """Head, tail and seal state of a segment."""
        self._send(GET_INFO, _I64.pack(self._request_id()) + _str(segment) + _str(token))
        code, body = self._receive()
        if code != SEGMENT_INFO:
            raise self._error(code, body, segment, -1)
        b = _Body(body)
        b.i64()
        name = b.string()
        exists = b.boolean()
        sealed = b.boolean()
        deleted = b.boolean()
        b.i64()  # last modified
        tail = b.i64()
        head = b.i64()
        if not exists or deleted:
            raise NoSuchSegmentError(segment)
        return SegmentInfo(name, head, tail, sealed)

    def read(self, segment: str, start: int, end: int, token: str = "") -> Iterator[tuple[int, memoryview]]:
        """Yield ``(offset, bytes)`` chunks covering exactly ``[start, end)`` (``end`` <= the tail)."""
        token_bytes = _str(token)
        name_bytes = _str(segment)
        in_flight: dict[int, tuple[int, int]] = {}
        order: list[int] = []
        next_request = start
        expected = start
        replies: dict[int, tuple[int, bytes]] = {}
        while expected < end:
            while next_request < end and (next_request - expected) < PIPELINE_BYTES:
                size = min(MAX_READ_BYTES, end - next_request)
                rid = self._request_id()
                self._send(
                    READ_SEGMENT,
                    name_bytes
                    + _I64.pack(next_request)
                    + struct.pack(">i", size)
                    + token_bytes
                    + _I64.pack(rid),
                )
                in_flight[rid] = (next_request, size)
                order.append(rid)
                next_request += size
            head_rid = order[0]
            while head_rid not in replies:
                code, body = self._receive()
                rid = self._reply_id(code, body)
                replies[rid] = (code, body)
            order.pop(0)
            code, body = replies.pop(head_rid)
            offset, size = in_flight.pop(head_rid)
            if code != SEGMENT_READ:
                self._drain(order, replies)
                raise self._error(code, body, segment, offset)
            b = _Body(body)
            b.string()
            got_offset = b.i64()
            b.boolean()
            b.boolean()
            data = b.data()
            if got_offset != offset or len(data) == 0:
                self._drain(order, replies)
                raise ConnectorError(
                    f"segment store {self.endpoint} answered a read of {segment}@{offset} with "
                    f"{len(data)} bytes at {got_offset}"
                )
            if len(data) > size:
                data = data[:size]
            yield offset, data
            expected = offset + len(data)
            if len(data) < size:
                # a short read: drop the reads issued after it and continue from where it ended
                self._drain(order, replies)
                in_flight.clear()
                order.clear()
                next_request = expected

    @staticmethod
    def _reply_id(code: int, body: bytes) -> int:
        if code == SEGMENT_READ:
            (n,) = struct.unpack_from(">H", body, 0)
            pos = 2 + n + 8 + 2
            (dn,) = struct.unpack_from(">I", body, pos)
            return int(_I64.unpack_from(body, pos + 4 + dn)[0])
        return int(_I64.unpack_from(body, 0)[0])

    def _drain(self, order: list[int], replies: dict[int, tuple[int, bytes]]) -> None:
        """Receive the replies still owed for ``order`` so the connection stays usable."""
        pending = [rid for rid in order if rid not in replies]
        while pending:
            code, body = self._receive()
            rid = self._reply_id(code, body)
            if rid in pending:
                pending.remove(rid)
        order.clear()
        replies.clear()

    def close(self) -> None:
        """Close the connection."""
        try:
            self._file.close()
        finally:
            self._sock.close()
