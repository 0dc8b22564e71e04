"""``FaultProxy``: a TCP proxy in front of one upstream that injects network faults for tests.

Faults are set at runtime from the test's thread, while clients are connected:

- ``set_latency(s)``: every chunk forwarded (either way) waits ``s`` seconds first;
- ``reset_all()``: every open connection is aborted with a TCP RST (both sides);
- ``refuse(s)``: open connections are reset and the port refuses new ones (ECONNREFUSED) for
  ``s`` seconds, then listens again (``restore()`` ends it early);
- ``blackhole(s)``: open connections are reset and new ones are accepted but get no upstream and
  no answer, as behind a dropping firewall, for ``s`` seconds (held connections are then reset);
- ``half_open(direction, accepted_after=n)``: the connections open now (those accepted after the
  ``n``-th, if given) stay open but stop forwarding in one or both directions (what they send is
  read and dropped), like a peer that vanished without a FIN; they are never healed, so only a
  client that times out its requests recovers;
- ``stats()``: bytes forwarded each way, connections accepted, open, reset.

Threading: the proxy runs an asyncio loop on one daemon thread that it owns; every control method
hands its work to that loop (``call_soon_threadsafe``) and waits for it, so they may be called
from any thread. ``stop()`` resets every connection and ends the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import socket
import struct
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["Direction", "FaultProxy", "ProxyStats"]

CHUNK_BYTES = 65536
CONTROL_TIMEOUT_S = 10.0
UPSTREAM_CONNECT_TIMEOUT_S = 5.0
_T = TypeVar("_T")


class Direction(enum.Enum):
    """Which way a half-open connection stops forwarding."""

    UPSTREAM = "upstream"
    """client -> server bytes are dropped (requests vanish)."""
    DOWNSTREAM = "downstream"
    """server -> client bytes are dropped (answers vanish)."""
    BOTH = "both"


@dataclass(frozen=True)
class ProxyStats:
    """Counters since the proxy started."""

    bytes_up: int
    """Bytes forwarded client -> upstream."""
    bytes_down: int
    """Bytes forwarded upstream -> client."""
    accepted: int
    active: int
    resets: int
    """Connections aborted with RST by a fault (``reset_all``, ``refuse``, ``blackhole``)."""


class _Mode(enum.Enum):
    FORWARD = "forward"
    REFUSE = "refuse"
    BLACKHOLE = "blackhole"


class _Connection:
    """One client connection and its upstream (``None`` while blackholed)."""

    def __init__(
        self, client: asyncio.StreamWriter, upstream: asyncio.StreamWriter | None, number: int = 0
    ) -> None:
        self.client = client
        self.number = number
        """1 for the first connection the proxy accepted, and so on."""
        self.upstream = upstream
        self.drop_up = False
        self.drop_down = False
        self.tasks: list[asyncio.Task[None]] = []

    def abort(self) -> None:
        """Close both sockets with RST (linger 0), and stop the pumps."""
        for w in (self.client, self.upstream):
            if w is None:
                continue
            sock = w.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            w.transport.abort()
        for t in self.tasks:
            t.cancel()


class FaultProxy:
    """Forwards ``127.0.0.1:port`` to ``upstream_host:upstream_port``, with faults on demand.

    ``listen_port=0`` picks a free port; pass a fixed one when the upstream must know it before the
    proxy starts (a Kafka broker advertising the proxy's address). Use as a context manager or call
    ``start()`` / ``stop()``.
    """

    def __init__(self, upstream_host: str, upstream_port: int, listen_port: int = 0) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.host = "127.0.0.1"
        self.port = listen_port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._conns: set[_Connection] = set()
        self._mode = _Mode.FORWARD
        self._latency_s = 0.0
        self._restore_handle: asyncio.TimerHandle | None = None
        self._bytes_up = self._bytes_down = self._accepted = self._resets = 0

    @property
    def address(self) -> str:
        """``host:port`` clients connect to."""
        return f"{self.host}:{self.port}"

    # --- life cycle -------------------------------------------------------------------------------
    def start(self) -> FaultProxy:
        """Listen and forward (returns once the port accepts connections)."""
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(
            target=loop.run_forever, name=f"fault-proxy-{self.upstream[1]}", daemon=True
        )
        self._thread.start()
        self._call(self._listen)
        return self

    def stop(self) -> None:
        """Reset every connection, close the port and end the loop's thread."""
        if self._loop is None:
            return
        with contextlib.suppress(Exception):
            self._call(self._shutdown)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(CONTROL_TIMEOUT_S)
        self._loop.close()
        self._loop = None

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- faults -----------------------------------------------------------------------------------
    def set_latency(self, seconds: float) -> None:
        """Delay every forwarded chunk by ``seconds`` (0 for none)."""
        if seconds < 0:
            raise ValueError(f"latency must be >= 0 seconds, got {seconds}")
        self._latency_s = seconds

    def reset_all(self) -> int:
        """Abort every open connection with RST; returns how many there were."""
        return self._call(self._reset_all)

    def refuse(self, seconds: float | None = None) -> None:
        """Reset open connections and refuse new ones for ``seconds`` (until ``restore()`` if None)."""
        self._call(lambda: self._enter(_Mode.REFUSE, seconds))

    def blackhole(self, seconds: float | None = None) -> None:
        """Reset open connections and hold new ones silent for ``seconds`` (until ``restore()`` if None)."""
        self._call(lambda: self._enter(_Mode.BLACKHOLE, seconds))

    def restore(self) -> None:
        """Forward again (ends ``refuse``/``blackhole``; latency stays; half-open connections stay dead)."""
        self._call(self._restore)

    def half_open(self, direction: Direction = Direction.BOTH, accepted_after: int = 0) -> int:
        """Stop forwarding on the open connections in ``direction``; returns how many.

        ``accepted_after``: only connections accepted after that many (``stats().accepted`` taken
        earlier), so a client that connected before, such as a server's own peer, is spared.
        """

        async def apply() -> int:
            chosen = [c for c in self._conns if c.number > accepted_after]
            for c in chosen:
                c.drop_up = c.drop_up or direction in (Direction.UPSTREAM, Direction.BOTH)
                c.drop_down = c.drop_down or direction in (Direction.DOWNSTREAM, Direction.BOTH)
            return len(chosen)

        return self._call(apply)

    @property
    def mode(self) -> str:
        """``forward``, ``refuse`` or ``blackhole``."""
        return self._mode.value

    def stats(self) -> ProxyStats:
        """A snapshot of the counters."""
        return ProxyStats(self._bytes_up, self._bytes_down, self._accepted, len(self._conns), self._resets)

    # --- on the loop ------------------------------------------------------------------------------
    def _call(self, fn: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
        assert self._loop is not None, "the proxy is not started"
        return asyncio.run_coroutine_threadsafe(fn(), self._loop).result(CONTROL_TIMEOUT_S)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(
            self._on_client, self.host, self.port, reuse_address=True, limit=CHUNK_BYTES
        )
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def _close_listener(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    async def _shutdown(self) -> None:
        if self._restore_handle is not None:
            self._restore_handle.cancel()
        await self._close_listener()
        await self._reset_all()
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in pending:
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)  # none left pending at loop close

    async def _reset_all(self) -> int:
        conns = list(self._conns)
        for c in conns:
            c.abort()
        self._conns.clear()
        self._resets += len(conns)
        return len(conns)

    async def _enter(self, mode: _Mode, seconds: float | None) -> None:
        if self._restore_handle is not None:
            self._restore_handle.cancel()
            self._restore_handle = None
        self._mode = mode
        await self._reset_all()
        if mode is _Mode.REFUSE:
            await self._close_listener()
        if seconds is not None:
            loop = asyncio.get_running_loop()
            self._restore_handle = loop.call_later(seconds, lambda: loop.create_task(self._restore()))

    async def _restore(self) -> None:
        if self._restore_handle is not None:
            self._restore_handle.cancel()
            self._restore_handle = None
        was, self._mode = self._mode, _Mode.FORWARD
        if was is _Mode.BLACKHOLE:
            await self._reset_all()  # the held connections never had an upstream
        if self._server is None:
            await self._listen()

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.CancelledError):  # reset or stopped: no error for asyncio to log
            await self._serve(reader, writer)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._accepted += 1
        number = self._accepted
        if self._mode is not _Mode.FORWARD:
            conn = _Connection(writer, None)
            self._conns.add(conn)
            task = asyncio.current_task()
            assert task is not None
            conn.tasks.append(task)  # type: ignore[arg-type]
            with contextlib.suppress(Exception, asyncio.CancelledError):
                while await reader.read(CHUNK_BYTES):
                    pass  # a blackhole: read and answer nothing
            self._forget(conn)
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(*self.upstream, limit=CHUNK_BYTES), UPSTREAM_CONNECT_TIMEOUT_S
            )
        except (OSError, TimeoutError):
            _Connection(writer, None).abort()  # upstream down: the client sees a reset
            return
        conn = _Connection(writer, up_writer, number)
        self._conns.add(conn)
        conn.tasks = [
            asyncio.create_task(self._pump(conn, reader, up_writer, upstream=True)),
            asyncio.create_task(self._pump(conn, up_reader, writer, upstream=False)),
        ]
        await asyncio.gather(*conn.tasks, return_exceptions=True)
        self._forget(conn)

    def _forget(self, conn: _Connection) -> None:
        if conn in self._conns:
            self._conns.discard(conn)
            for w in (conn.client, conn.upstream):
                if w is not None:
                    w.close()

    async def _pump(
        self, conn: _Connection, src: asyncio.StreamReader, dst: asyncio.StreamWriter, upstream: bool
    ) -> None:
        try:
            while True:
                data = await src.read(CHUNK_BYTES)
                if not data:
                    break
                if conn.drop_up if upstream else conn.drop_down:
                    continue  # half-open: read and dropped, the sender is never told
                if self._latency_s:
                    await asyncio.sleep(self._latency_s)
                if upstream:  # counted when handed on (the peer may have it before drain returns)
                    self._bytes_up += len(data)
                else:
                    self._bytes_down += len(data)
                dst.write(data)
                await dst.drain()
            if not (conn.drop_up if upstream else conn.drop_down):
                with contextlib.suppress(OSError):
                    dst.write_eof()  # pass the FIN on; the other direction may still flow
        except (OSError, asyncio.IncompleteReadError):
            conn.abort()
