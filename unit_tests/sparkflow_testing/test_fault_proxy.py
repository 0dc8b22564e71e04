"""The fault proxy itself, in front of a small echo server on loopback (fast: no broker)."""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
import time
from collections.abc import Iterator

import pytest

from sparkflow_testing.network.fault_proxy import Direction, FaultProxy


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        with contextlib.suppress(ConnectionResetError):  # the proxy's resets reach here too
            while data := self.request.recv(65536):
                self.request.sendall(data)


@pytest.fixture
def proxy() -> Iterator[FaultProxy]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with FaultProxy("127.0.0.1", server.server_address[1]) as p:
        yield p
    server.shutdown()
    server.server_close()


def _connect(p: FaultProxy, timeout: float = 2.0) -> socket.socket:
    """A client connection, returned once the proxy has connected it upstream."""
    before = p.stats().accepted
    s = socket.create_connection((p.host, p.port), timeout=timeout)
    deadline = time.monotonic() + 2
    while p.stats().accepted == before and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)  # the upstream connect follows the accept
    return s


def _echo(s: socket.socket, payload: bytes) -> bytes:
    s.sendall(payload)
    got = b""
    while len(got) < len(payload):
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def test_forwards_both_ways_and_counts_bytes(proxy: FaultProxy) -> None:
    with _connect(proxy) as s:
        assert _echo(s, b"x" * 100_000) == b"x" * 100_000
    stats = proxy.stats()
    assert stats.bytes_up == stats.bytes_down == 100_000
    assert stats.accepted == 1


def test_latency_is_added_per_chunk(proxy: FaultProxy) -> None:
    proxy.set_latency(0.2)
    with _connect(proxy) as s:
        began = time.monotonic()
        assert _echo(s, b"ping") == b"ping"
        assert time.monotonic() - began >= 0.4  # once each way
    proxy.set_latency(0)
    with _connect(proxy) as s:
        began = time.monotonic()
        _echo(s, b"ping")
        assert time.monotonic() - began < 0.2


def test_reset_all_aborts_open_connections_with_rst(proxy: FaultProxy) -> None:
    s = _connect(proxy)
    assert _echo(s, b"a") == b"a"
    assert proxy.reset_all() == 1
    with pytest.raises(ConnectionResetError):
        s.sendall(b"b")
        s.recv(10)
        s.sendall(b"c")
        s.recv(10)
    s.close()
    with _connect(proxy) as s2:  # new connections work at once
        assert _echo(s2, b"d") == b"d"
    assert proxy.stats().resets == 1


def test_refuse_for_a_while_then_back(proxy: FaultProxy) -> None:
    open_conn = _connect(proxy)
    _echo(open_conn, b"a")
    proxy.refuse(0.8)
    assert proxy.mode == "refuse"
    with pytest.raises(ConnectionRefusedError):
        _connect(proxy)
    with pytest.raises(OSError):
        open_conn.sendall(b"b")
        assert open_conn.recv(10) == b""
    open_conn.close()
    time.sleep(1.2)
    assert proxy.mode == "forward"
    with _connect(proxy) as s:
        assert _echo(s, b"back") == b"back"


def test_blackhole_accepts_and_never_answers_then_back(proxy: FaultProxy) -> None:
    proxy.blackhole()
    with _connect(proxy, timeout=0.5) as s:
        s.sendall(b"hello")
        with pytest.raises(TimeoutError):
            s.recv(10)
    proxy.restore()
    with _connect(proxy) as s:
        assert _echo(s, b"back") == b"back"
    assert proxy.stats().bytes_up == 4


def test_half_open_stops_forwarding_without_closing(proxy: FaultProxy) -> None:
    s = _connect(proxy, timeout=0.5)
    _echo(s, b"a")
    assert proxy.half_open(Direction.DOWNSTREAM) == 1
    s.sendall(b"lost")
    with pytest.raises(TimeoutError):  # no answer, no FIN, no RST
        s.recv(10)
    assert proxy.stats().active == 1
    s.close()
    with _connect(proxy) as s2:  # a new connection is healthy
        assert _echo(s2, b"new") == b"new"


def test_half_open_upstream_drops_requests(proxy: FaultProxy) -> None:
    s = _connect(proxy, timeout=0.5)
    assert proxy.half_open(Direction.UPSTREAM) == 1
    before = proxy.stats().bytes_up
    s.sendall(b"lost")
    with pytest.raises(TimeoutError):
        s.recv(10)
    assert proxy.stats().bytes_up == before
    s.close()


def test_bad_latency_is_refused(proxy: FaultProxy) -> None:
    with pytest.raises(ValueError, match="latency"):
        proxy.set_latency(-1)
