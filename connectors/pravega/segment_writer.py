"""``SegmentWriter``: ordered, deduplicated appends to one segment over Pravega's wire protocol.

The writer owns one connection to the segment store that holds its segment and a writer id (a
random 128-bit id, as the official clients use). ``SetupAppend`` answers ``AppendSetup`` with the
last event number the store holds for that writer id. Events are framed (``int32 0``, ``int32
length``, payload) into blocks of up to ``BLOCK_BYTES``; each block goes as one ``AppendBlockEnd``
carrying the block's event count and its last event number (one number per event, increasing).
The store acknowledges with ``DataAppended`` up to an event number; at most ``WINDOW_BYTES`` are
unacknowledged at a time.

Resends are deduplicated: when the connection fails (refused, reset, closed, silent for
``readTimeoutMs``), the writer reconnects within ``networkTimeoutMs``, sets up again, drops every
block whose last event number the store reports as held, and sends the others again with their
original numbers. A block the store stored before the connection died is therefore never stored
twice.

A sealed segment (``SegmentIsSealed``) raises :class:`SegmentSealedError` carrying the events not
acknowledged, in order, with their routing keys: the event writer sends them to the successors.
``NoSuchSegment`` (a transaction that was aborted or committed, a deleted stream) is an error.

Threading: one writer is used by one thread.
"""

from __future__ import annotations

import logging
import ssl
import struct
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from connector_base import ConnectorError
from connectors.pravega.network_retry import NetworkRetry
from connectors.pravega.segment_store_client import (
    AUTH_FAILED,
    ERROR_MESSAGE,
    NO_SUCH_SEGMENT,
    OPERATION_UNSUPPORTED,
    SEGMENT_IS_SEALED,
    WRONG_HOST,
    SegmentStoreClient,
    SegmentStoreConnectionError,
    _Body,
    _str,
)

__all__ = [
    "BLOCK_BYTES",
    "WINDOW_BYTES",
    "SegmentSealedError",
    "SegmentWriter",
    "frame_event",
]

LOG = logging.getLogger(__name__)

SETUP_APPEND, APPEND_SETUP, APPEND_BLOCK_END, DATA_APPENDED = 1, 2, 4, 7
INVALID_EVENT_NUMBER = 55
EVENT_TYPE = 0
MAX_EVENT_BYTES = 8 * 1024 * 1024
"""The largest event Pravega accepts."""
BLOCK_BYTES = 1024 * 1024
"""Framed events are sent in blocks of about this size (one ``AppendBlockEnd`` each)."""
WINDOW_BYTES = 8 * 1024 * 1024
"""At most this many bytes are sent and not yet acknowledged."""
NO_EVENT = -(2**63)
"""The event number ``AppendSetup`` reports for a writer id the segment has never seen."""

_EVENT_HEADER = struct.Struct(">ii")
_BLOCK_END = struct.Struct(">iqq")  # num events, last event number, request id


class SegmentSealedError(ConnectorError):
    """The segment is sealed; ``unacked`` are the events it did not take, in order."""

    def __init__(self, segment: str, unacked: list[tuple[str | None, bytes]]) -> None:
        super().__init__(f"segment {segment} is sealed")
        self.segment = segment
        self.unacked = unacked


def frame_event(payload: bytes) -> bytes:
    """An event as it is stored in a segment: ``int32 0`` + ``int32 length`` + payload."""
    return _EVENT_HEADER.pack(EVENT_TYPE, len(payload)) + payload


@dataclass(slots=True)
class _Block:
    data: bytearray
    keys: list[str | None]
    last_event_number: int = 0
    sent: bool = False

    def events(self) -> list[tuple[str | None, bytes]]:
        out: list[tuple[str | None, bytes]] = []
        pos = 0
        view = memoryview(self.data)
        for key in self.keys:
            _type, length = _EVENT_HEADER.unpack_from(view, pos)
            out.append((key, bytes(view[pos + 8 : pos + 8 + length])))
            pos += 8 + length
        return out


@dataclass(slots=True)
class _Stats:
    """What the segment holds from this writer: acknowledged events and the store's write offset."""

    acked_events: int = 0
    write_offset: int = -1
    resent_blocks: int = 0
    reconnects: int = 0
    held_at_setup: int = 0
    """Events a new connection's ``AppendSetup`` said the store holds though their acknowledgement
    never arrived (dropped, not resent)."""


class SegmentWriter:
    """Appends to one segment (see the module docstring)."""

    def __init__(
        self,
        segment: str,
        endpoint: Callable[[], tuple[str, int]],
        token: Callable[[], str],
        read_timeout_s: float,
        network_timeout_ms: int,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.segment = segment
        self.writer_id = uuid.uuid4().int
        self._writer_id_bytes = self.writer_id.to_bytes(16, "big")
        self._endpoint = endpoint
        self._token = token
        self._read_timeout_s = read_timeout_s
        self._network_timeout_ms = network_timeout_ms
        self._tls = tls
        self._conn: SegmentStoreClient | None = None
        self._next_event = 0
        self._inflight: deque[_Block] = deque()
        self._inflight_bytes = 0
        self._pending = _Block(bytearray(), [])
        self._request_id = 0
        self.stats = _Stats()
        self._retry = self._new_retry()
        self._connect()

    def _new_retry(self) -> NetworkRetry:
        """The bound on failures since the last acknowledgement (a store that keeps answering
        WrongHost after a successful set-up fails the writer too, never loops)."""
        return NetworkRetry(
            f"segment store append to {self.segment}", "its segment store", self._network_timeout_ms
        )

    # --- connection -------------------------------------------------------------------------------
    def _connect(self) -> None:
        """Connect, set up appends and resend what the store does not hold (within the bound)."""
        retry = self._retry
        while True:
            retry.attempt()
            conn: SegmentStoreClient | None = None
            try:
                host, port = self._endpoint()
                conn = SegmentStoreClient(host, port, timeout_s=self._read_timeout_s, tls=self._tls)
                last = self._setup(conn)
                self._conn = conn
                self._resend_after(last)
                return
            except (OSError, SegmentStoreConnectionError, _Reconnect) as e:
                self._close(conn)
                self._conn = None
                retry.failed(e, conn.endpoint if conn is not None else None)
            except BaseException:
                self._close(conn)
                self._conn = None
                raise

    def _setup(self, conn: SegmentStoreClient) -> int:
        self._request_id += 1
        body = (
            struct.pack(">q", self._request_id)
            + self._writer_id_bytes
            + _str(self.segment)
            + _str(self._token())
        )
        conn._send(SETUP_APPEND, body)
        while True:
            code, reply = conn._receive()
            if code == APPEND_SETUP:
                b = _Body(reply)
                b.i64()  # request id
                b.string()  # segment
                b.pos += 16  # writer id
                return b.i64()
            self._error(code, reply)

    def _resend_after(self, last: int) -> None:
        """Drop blocks the store holds (event number <= ``last``), send the others again."""
        while self._inflight and self._inflight[0].last_event_number <= last:
            self.stats.held_at_setup += len(self._inflight[0].keys)
            self._ack_front()
        for block in self._inflight:
            if block.sent:
                self.stats.resent_blocks += 1
            self._send(block)

    @staticmethod
    def _close(conn: SegmentStoreClient | None) -> None:
        if conn is not None:
            try:
                conn.close()
            except OSError:
                pass

    def _reconnect(self, why: BaseException) -> None:
        """Count the failure against ``networkTimeoutMs`` (since the last acknowledgement), connect again."""
        LOG.info("append connection of %s failed (%s); reconnecting", self.segment, why)
        self.stats.reconnects += 1
        self._close(self._conn)
        self._conn = None
        self._retry.failed(why)
        self._connect()

    # --- appends -----------------------------------------------------------------------------------
    def append(self, payload: bytes, key: str | None) -> None:
        """Queue one event; a full block is sent (waiting for acknowledgements past the window)."""
        pending = self._pending
        pending.data += _EVENT_HEADER.pack(EVENT_TYPE, len(payload))
        pending.data += payload
        pending.keys.append(key)
        if len(pending.data) >= BLOCK_BYTES:
            self.send_pending()

    def append_framed(self, framed: bytes | bytearray | memoryview, keys: list[str | None]) -> None:
        """Queue events already framed (``frame_event``), one key each, in order."""
        pending = self._pending
        pending.data += framed
        pending.keys.extend(keys)
        if len(pending.data) >= BLOCK_BYTES:
            self.send_pending()

    @property
    def pending_bytes(self) -> int:
        """Bytes queued and not yet sent."""
        return len(self._pending.data)

    def send_pending(self) -> None:
        """Send the queued events as one block."""
        block = self._pending
        if not block.keys:
            return
        if len(block.data) > MAX_EVENT_BYTES + 8 and len(block.keys) == 1:
            raise ConnectorError(
                f"an event of {len(block.data) - 8} bytes is larger than Pravega's limit of {MAX_EVENT_BYTES}"
            )
        self._pending = _Block(bytearray(), [])
        self._next_event += len(block.keys)
        block.last_event_number = self._next_event
        self._inflight.append(block)
        self._inflight_bytes += len(block.data)
        if self._conn is None:  # closed: connecting sends every unacknowledged block, this one too
            self._connect()
        else:
            try:
                self._send(block)
            except (OSError, SegmentStoreConnectionError) as e:
                self._reconnect(e)
        while self._inflight_bytes > WINDOW_BYTES:
            self._receive_one()

    def _send(self, block: _Block) -> None:
        assert self._conn is not None
        self._request_id += 1
        data = block.data
        head = (
            struct.pack(">ii", APPEND_BLOCK_END, 16 + 4 + 4 + len(data) + 20)
            + self._writer_id_bytes
            + struct.pack(">iI", len(data), len(data))
        )
        tail = _BLOCK_END.pack(len(block.keys), block.last_event_number, self._request_id)
        self._conn._sock.sendall(head)
        self._conn._sock.sendall(data)
        self._conn._sock.sendall(tail)
        block.sent = True

    def flush(self) -> None:
        """Send what is queued and wait until the store has acknowledged every event."""
        self.send_pending()
        while self._inflight:
            self._receive_one()

    # --- replies -----------------------------------------------------------------------------------
    def _receive_one(self) -> None:
        if self._conn is None:
            self._connect()
            return
        try:
            code, body = self._conn._receive()
        except (OSError, SegmentStoreConnectionError) as e:
            self._reconnect(e)
            return
        try:
            if code == DATA_APPENDED:
                b = _Body(body)
                b.pos = 16
                event_number = b.i64()
                b.i64()  # previous event number
                b.i64()  # request id
                if b.pos < len(body):
                    self.stats.write_offset = b.i64()
                if self._inflight and self._inflight[0].last_event_number <= event_number:
                    self._retry = self._new_retry()
                while self._inflight and self._inflight[0].last_event_number <= event_number:
                    self._ack_front()
                return
            self._error(code, body)
        except _Reconnect as e:
            self._reconnect(e)

    def _ack_front(self) -> None:
        block = self._inflight.popleft()
        self._inflight_bytes -= len(block.data)
        self.stats.acked_events += len(block.keys)

    def _error(self, code: int, body: bytes) -> None:
        """Raise for an error reply (``_Reconnect`` for the ones a new connection may cure)."""
        if code == SEGMENT_IS_SEALED:
            raise SegmentSealedError(self.segment, self.unacked())
        if code in (WRONG_HOST, INVALID_EVENT_NUMBER):
            raise _Reconnect(
                f"segment store answered {'WrongHost' if code == WRONG_HOST else 'InvalidEventNumber'}"
            )
        if code == NO_SUCH_SEGMENT:
            raise ConnectorError(f"segment {self.segment} does not exist (deleted, or its transaction ended)")
        if code == ERROR_MESSAGE:
            b = _Body(body)
            b.i64()
            b.string()
            raise ConnectorError(f"segment store refused appends to {self.segment}: {b.string()}")
        names = {AUTH_FAILED: "AuthTokenCheckFailed", OPERATION_UNSUPPORTED: "OperationUnsupported"}
        raise ConnectorError(f"segment store answered {names.get(code, code)} to appends on {self.segment}")

    def unacked(self) -> list[tuple[str | None, bytes]]:
        """The events sent or queued and not acknowledged, in order (``(routing key, payload)``)."""
        out: list[tuple[str | None, bytes]] = []
        for block in self._inflight:
            out.extend(block.events())
        out.extend(self._pending.events())
        return out

    def close(self) -> None:
        """Close the connection (without flushing)."""
        self._close(self._conn)
        self._conn = None


class _Reconnect(ConnectorError):
    """An answer after which the writer connects again (the store moved, or lost the writer's state)."""
