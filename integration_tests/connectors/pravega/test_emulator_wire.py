"""The segment store and controller at the protocol level, without the official client.

These pin behaviour a protocol-level client (such as the project's own connector) relies on:
handshake, append de-duplication, conditional appends, at-tail reads, end of segment, truncation
and table conditions, segments, successors and transactions on the controller. Each runs on both
backends (``server``: the real Pravega standalone of the session, and a dedicated emulator with a
short tail wait). Checks of the emulator itself (its bounded tail wait, its log of unknown
commands and unimplemented methods) are named ``test_emulator_only_*`` and use ``emulator``.
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from connectors.pravega._proto import controller_pb2 as pb
from sparkflow_testing.pravega.cluster import BACKEND_ENV, Backend, EmulatorProcess
from sparkflow_testing.pravega.emulator import wire_commands as wc
from sparkflow_testing.pravega.emulator.controller import ControllerStub

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60, method="signal")]

TAIL_WAIT_MS = 300


@dataclass
class _Server:
    """Where a wire test connects: a backend's controller and segment store ports."""

    backend: str
    ports: dict[str, Any]
    scope: str


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmulatorProcess]:
    log = tmp_path_factory.mktemp("wire") / "emulator.log"
    process = EmulatorProcess(log_path=log, tail_wait_ms=TAIL_WAIT_MS)
    process.start()
    yield process
    process.stop()


def _segment_store_port(controller_port: int, scope: str) -> int:
    channel = grpc.insecure_channel(f"127.0.0.1:{controller_port}")
    try:
        stub = ControllerStub(channel)
        _stream(stub, scope, "probe")
        info = pb.StreamInfo(scope=scope, stream="probe")
        return int(stub.getURI(pb.SegmentId(streamInfo=info, segmentId=0)).port)
    finally:
        channel.close()


@pytest.fixture(scope="module", params=(Backend.STANDALONE, Backend.EMULATOR))
def server(request: pytest.FixtureRequest, pravega_clusters: Any) -> _Server:
    """Each backend in turn (only ``$PRAVEGA_BACKEND``'s when it is set), with a fresh scope."""
    chosen = os.environ.get(BACKEND_ENV, "").strip().lower()
    if chosen and chosen != request.param:
        pytest.skip(f"{BACKEND_ENV}={chosen} runs one backend")
    scope = f"wire{uuid.uuid4().hex[:8]}"
    if request.param == Backend.EMULATOR:
        emulator = request.getfixturevalue("emulator")
        return _Server(Backend.EMULATOR, dict(emulator.ports), scope)
    cluster = pravega_clusters.get(Backend.STANDALONE)
    controller_port = int(cluster.controller_uri.rsplit(":", 1)[1])
    ports = {
        "controller_port": controller_port,
        "segment_store_port": _segment_store_port(controller_port, scope),
    }
    return _Server(Backend.STANDALONE, ports, scope)


@pytest.fixture(scope="module")
def controller(server: _Server) -> Iterator[ControllerStub]:
    channel = grpc.insecure_channel(f"127.0.0.1:{server.ports['controller_port']}")
    yield ControllerStub(channel)
    channel.close()


class _Wire:
    """A blocking wire-protocol connection for tests."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.send(wc.Hello(wc.WIRE_VERSION, wc.OLDEST_COMPATIBLE_VERSION))
        hello = self.recv()  # Pravega 0.13 answers version 16, the emulator 15 (a declared difference)
        assert isinstance(hello, wc.Hello) and hello.high_version >= 15 and hello.low_version == 5, hello

    def send(self, command: wc.WireCommand) -> None:
        self.sock.sendall(wc.encode(command))

    def _exactly(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed")
            data += chunk
        return data

    def recv(self) -> wc.WireCommand:
        type_code, length = wc.parse_header(self._exactly(8))
        return wc.decode(type_code, self._exactly(length))

    def call(self, command: wc.WireCommand) -> wc.WireCommand:
        self.send(command)
        return self.recv()

    def close(self) -> None:
        self.sock.close()


def _stream(controller: ControllerStub, scope: str, stream: str, segments: int = 1) -> None:
    controller.createScope(pb.ScopeInfo(scope=scope))  # SCOPE_EXISTS after the first
    status = controller.createStream(
        pb.StreamConfig(
            streamInfo=pb.StreamInfo(scope=scope, stream=stream),
            scalingPolicy=pb.ScalingPolicy(minNumSegments=segments),
        )
    )
    assert status.status == pb.CreateStreamStatus.SUCCESS


def test_appends_are_deduplicated_by_writer_event_number(server, controller) -> None:
    _stream(controller, server.scope, "dedup")
    segment = f"{server.scope}/dedup/0.#epoch.0"
    conn = _Wire(server.ports["segment_store_port"])
    setup = conn.call(wc.SetupAppend(1, 77, segment, ""))
    assert setup == wc.AppendSetup(1, segment, 77, -(2**63))
    events = wc.frame_event(b"a") + wc.frame_event(b"b")
    ack = conn.call(wc.AppendBlockEnd(77, len(events), events, 2, 2, 2))
    assert ack == wc.DataAppended(77, 2, -(2**63), 2, len(events))
    conn.close()
    reconnect = _Wire(server.ports["segment_store_port"])
    assert reconnect.call(wc.SetupAppend(4, 77, segment, "")).last_event_number == 2
    read = reconnect.call(wc.ReadSegment(segment, 0, 1000, "", 5))
    assert wc.split_events(read.data) == [b"a", b"b"] and read.at_tail and not read.end_of_segment
    reconnect.close()


def test_emulator_only_retransmitted_append_is_acknowledged_again(emulator) -> None:
    """The emulator acknowledges a retransmitted block again; Pravega 0.13 does not answer it."""
    channel = grpc.insecure_channel(f"127.0.0.1:{emulator.ports['controller_port']}")
    _stream(ControllerStub(channel), "wireonly", "dedup")
    channel.close()
    segment = "wireonly/dedup/0.#epoch.0"
    conn = _Wire(emulator.ports["segment_store_port"])
    conn.call(wc.SetupAppend(1, 77, segment, ""))
    events = wc.frame_event(b"a") + wc.frame_event(b"b")
    conn.call(wc.AppendBlockEnd(77, len(events), events, 2, 2, 2))
    again = conn.call(wc.AppendBlockEnd(77, len(events), events, 2, 2, 3))  # a retransmission
    assert again.event_number == 2 and again.current_segment_write_offset == len(events)
    conn.close()


def test_conditional_appends_check_the_offset(server, controller) -> None:
    _stream(controller, server.scope, "conditional")
    segment = f"{server.scope}/conditional/0.#epoch.0"
    conn = _Wire(server.ports["segment_store_port"])
    conn.call(wc.SetupAppend(1, 5, segment, ""))
    ok = conn.call(wc.ConditionalBlockEnd(5, 1, 0, b"12345", 2))
    assert isinstance(ok, wc.DataAppended) and ok.current_segment_write_offset == 5
    failed = conn.call(wc.ConditionalBlockEnd(5, 2, 0, b"67890", 3))
    assert failed == wc.ConditionalCheckFailed(5, 2, 3)
    event = conn.call(wc.ConditionalAppend(5, 3, 5, b"ev", 4))
    assert isinstance(event, wc.DataAppended) and event.current_segment_write_offset == 5 + 8 + 2
    conn.close()


def test_reads_at_the_tail_see_new_data(server, controller) -> None:
    _stream(controller, server.scope, "tail")
    segment = f"{server.scope}/tail/0.#epoch.0"
    reader = _Wire(server.ports["segment_store_port"])
    writer = _Wire(server.ports["segment_store_port"])
    writer.call(wc.SetupAppend(1, 9, segment, ""))
    reader.send(wc.ReadSegment(segment, 0, 100, "", 2))  # waits at the tail ...
    time.sleep(0.05)
    writer.call(wc.AppendBlockEnd(9, 3, b"xyz", 1, 1, 2))  # ... until this arrives
    woke = reader.recv()
    while isinstance(woke, wc.SegmentRead) and not woke.data:  # an empty answer at the tail first
        reader.send(wc.ReadSegment(segment, 0, 100, "", 3))
        woke = reader.recv()
    assert woke.data == b"xyz"
    reader.close()
    writer.close()


def test_emulator_only_reads_at_the_tail_wait_a_bounded_time(emulator) -> None:
    """The emulator answers an at-tail read with no data after ``--tail-wait-ms``."""
    channel = grpc.insecure_channel(f"127.0.0.1:{emulator.ports['controller_port']}")
    _stream(ControllerStub(channel), "wireonly", "tail")
    channel.close()
    reader = _Wire(emulator.ports["segment_store_port"])
    started = time.monotonic()
    empty = reader.call(wc.ReadSegment("wireonly/tail/0.#epoch.0", 0, 100, "", 1))
    waited = time.monotonic() - started
    assert empty.data == b"" and empty.at_tail and not empty.end_of_segment
    assert TAIL_WAIT_MS / 1000 * 0.8 <= waited < TAIL_WAIT_MS / 1000 + 2
    reader.close()


def test_sealed_truncated_and_missing_segments(server, controller) -> None:
    _stream(controller, server.scope, "states")
    segment = f"{server.scope}/states/0.#epoch.0"
    conn = _Wire(server.ports["segment_store_port"])
    conn.call(wc.SetupAppend(1, 3, segment, ""))
    conn.call(wc.AppendBlockEnd(3, 10, b"0123456789", 1, 1, 2))
    assert conn.call(wc.TruncateSegment(3, segment, 4, "")) == wc.SegmentTruncated(3, segment)
    truncated = conn.call(wc.ReadSegment(segment, 0, 100, "", 4))
    assert isinstance(truncated, wc.SegmentIsTruncated) and truncated.start_offset == 4
    info = conn.call(wc.GetStreamSegmentInfo(5, segment, ""))
    assert (info.start_offset, info.write_offset, info.is_sealed) == (4, 10, False)
    assert conn.call(wc.SealSegment(6, segment, "")) == wc.SegmentSealed(6, segment)
    end = conn.call(wc.ReadSegment(segment, 10, 100, "", 7))
    assert not end.at_tail and end.end_of_segment and end.data == b""
    sealed = conn.call(wc.AppendBlockEnd(3, 1, b"x", 1, 2, 8))
    assert isinstance(sealed, wc.SegmentIsSealed) and sealed.request_id == 8
    # Like the real store, setting up appends on a sealed segment succeeds; the append then fails.
    assert isinstance(conn.call(wc.SetupAppend(11, 12, segment, "")), wc.AppendSetup)
    assert isinstance(conn.call(wc.AppendBlockEnd(12, 1, b"x", 1, 1, 12)), wc.SegmentIsSealed)
    missing = conn.call(wc.ReadSegment(f"{server.scope}/states/9.#epoch.0", 0, 10, "", 9))
    assert isinstance(missing, wc.NoSuchSegment)
    assert isinstance(
        conn.call(wc.SetupAppend(10, 4, f"{server.scope}/nope/0.#epoch.0", "")), wc.NoSuchSegment
    )
    conn.close()


def test_table_segment_conditions(server) -> None:
    conn = _Wire(server.ports["segment_store_port"])
    table = f"{server.scope}/_tables/0.#epoch.0"
    assert conn.call(wc.CreateTableSegment(1, table, "")) == wc.SegmentCreated(1, table)
    assert isinstance(conn.call(wc.CreateTableSegment(2, table, "")), wc.SegmentAlreadyExists)
    entry = ((wc.TableKey(b"k", wc.KEY_NOT_EXISTS), wc.TableValue(b"v1")),)
    (version,) = conn.call(wc.UpdateTableEntries(3, table, "", entry, wc.NO_OFFSET)).updated_versions
    assert isinstance(
        conn.call(wc.UpdateTableEntries(4, table, "", entry, wc.NO_OFFSET)), wc.TableKeyBadVersion
    )
    read = conn.call(wc.ReadTable(5, table, "", (wc.TableKey(b"k"), wc.TableKey(b"absent"))))
    assert [(k.data, k.version, v.data) for k, v in read.entries] == [
        (b"k", version, b"v1"),
        (b"absent", wc.KEY_NOT_EXISTS, b""),
    ]
    delta = conn.call(wc.ReadTableEntriesDelta(6, table, "", 0, 10))
    assert [(k.data, v.data) for k, v in delta.entries] == [(b"k", b"v1")] and delta.reached_end
    missing_key = conn.call(wc.RemoveTableKeys(7, table, "", (wc.TableKey(b"absent", 3),), wc.NO_OFFSET))
    assert isinstance(missing_key, wc.TableKeyDoesNotExist)
    not_empty = conn.call(wc.DeleteTableSegment(8, table, True, ""))
    assert isinstance(not_empty, wc.TableSegmentNotEmpty)
    assert conn.call(wc.DeleteTableSegment(9, table, False, "")) == wc.SegmentDeleted(9, table)
    conn.close()


def test_emulator_only_keep_alive_and_unknown_commands(emulator) -> None:
    conn = _Wire(emulator.ports["segment_store_port"])
    assert conn.call(wc.KeepAlive()) == wc.KeepAlive()
    conn.sock.sendall(struct.pack(">ii", 4242, 0))  # not a Pravega command: the connection closes
    with pytest.raises((ConnectionError, OSError)):
        conn.recv()
    conn.close()
    log = Path(emulator.log_path).read_text()
    assert "unknown wire command type 4242" in log


def test_emulator_only_unimplemented_controller_methods_answer_unimplemented(emulator) -> None:
    channel = grpc.insecure_channel(f"127.0.0.1:{emulator.ports['controller_port']}")
    call = channel.unary_unary(
        "/io.pravega.controller.stream.api.grpc.v1.ControllerService/createKeyValueTable"
    )
    with pytest.raises(grpc.RpcError) as raised:
        call(b"", timeout=5)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
    channel.close()
    time.sleep(0.2)
    assert "UNIMPLEMENTED controller method called" in Path(emulator.log_path).read_text()


def test_controller_segments_successors_and_transactions(server, controller) -> None:
    _stream(controller, server.scope, "lineage", segments=2)
    info = pb.StreamInfo(scope=server.scope, stream="lineage")
    ranges = controller.getCurrentSegments(info).segmentRanges
    assert [(r.segmentId.segmentId, r.minKey, r.maxKey) for r in ranges] == [(0, 0.0, 0.5), (1, 0.5, 1.0)]
    split = [
        pb.ScaleRequest.KeyRangeEntry(start=0.5, end=0.75),
        pb.ScaleRequest.KeyRangeEntry(start=0.75, end=1.0),
    ]
    scaled = controller.scale(pb.ScaleRequest(streamInfo=info, sealedSegments=[1], newKeyRanges=split))
    assert scaled.status == pb.ScaleResponse.STARTED and scaled.epoch == 0  # the epoch it started from
    assert [r.segmentId.segmentId for r in scaled.segments] == [(1 << 32) | 2, (1 << 32) | 3]
    check = pb.ScaleStatusRequest(streamInfo=info, epoch=scaled.epoch)
    deadline = time.monotonic() + 30
    while controller.checkScale(check).status != pb.ScaleStatusResponse.SUCCESS:
        assert time.monotonic() < deadline, "the scale did not complete"
        time.sleep(0.1)
    successors = controller.getSegmentsImmediatelyFollowing(pb.SegmentId(streamInfo=info, segmentId=1))
    assert sorted((e.segment.segmentId.segmentId, list(e.value)) for e in successors.segments) == [
        ((1 << 32) | 2, [1]),
        ((1 << 32) | 3, [1]),
    ]
    request = pb.StreamCutRange(streamInfo=info, to={0: 0, (1 << 32) | 2: 0, (1 << 32) | 3: 0})
    getattr(request, "from").update({0: 0, 1: 0})
    between = controller.getSegmentsBetween(request)
    assert sorted(s.segmentId for s in between.segments) == [0, 1, (1 << 32) | 2, (1 << 32) | 3]
    epoch0 = controller.getEpochSegments(pb.GetEpochSegmentsRequest(streamInfo=info, epoch=0))
    assert [r.segmentId.segmentId for r in epoch0.segmentRanges] == [0, 1]
    head = controller.getSegments(pb.GetSegmentsRequest(streamInfo=info, timestamp=0))
    assert {s.segmentId.segmentId: s.offset for s in head.segments} == {0: 0, 1: 0}
    uri = controller.getURI(pb.SegmentId(streamInfo=info, segmentId=0))
    assert uri.port == server.ports["segment_store_port"]

    txn = controller.createTransaction(pb.CreateTxnRequest(streamInfo=info, lease=30000))
    assert txn.txnId.highBits >> 32 == 1  # created in epoch 1
    state = controller.checkTransactionState(pb.TxnRequest(streamInfo=info, txnId=txn.txnId))
    assert state.state == pb.TxnState.OPEN
    assert controller.commitTransaction(pb.TxnRequest(streamInfo=info, txnId=txn.txnId)).status == 0
    # Pravega commits in the background (COMMITTING first); the emulator at once.
    deadline = time.monotonic() + 30
    while True:
        state = controller.checkTransactionState(pb.TxnRequest(streamInfo=info, txnId=txn.txnId)).state
        if state != pb.TxnState.COMMITTING or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert state == pb.TxnState.COMMITTED


def test_asyncio_clients_can_pipeline_requests(server, controller) -> None:
    """Requests pipelined on one connection are answered in order (reads may overtake nothing)."""
    _stream(controller, server.scope, "pipeline")
    segment = f"{server.scope}/pipeline/0.#epoch.0"

    async def main() -> list[wc.WireCommand]:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.ports["segment_store_port"])
        # Pravega closes a connection that appends before its AppendSetup came back, so the
        # append waits for the setup; the rest is pipelined.
        rounds = [
            [wc.Hello(15, 5), wc.SetupAppend(1, 8, segment, "")],
            [wc.AppendBlockEnd(8, 2, b"hi", 1, 1, 2), wc.GetStreamSegmentInfo(3, segment, "")],
        ]
        replies = []
        for commands in rounds:
            writer.write(b"".join(wc.encode(c) for c in commands))
            await writer.drain()
            for _ in commands:
                type_code, length = wc.parse_header(await reader.readexactly(8))
                replies.append(wc.decode(type_code, await reader.readexactly(length)))
        writer.close()
        return replies

    replies = asyncio.run(main())
    names = [type(r).__name__ for r in replies]
    assert names[:2] == ["Hello", "AppendSetup"]
    # The real segment store acknowledges an append once it is durable, and may answer the info
    # request pipelined behind it first (seen on the standalone); the emulator answers in order.
    assert sorted(names[2:]) == ["DataAppended", "StreamSegmentInfo"]
    info = next(r for r in replies if type(r).__name__ == "StreamSegmentInfo")
    if names[2] == "DataAppended":
        assert info.write_offset == 2
    else:
        assert info.write_offset in (0, 2)
    if server.backend == Backend.EMULATOR:
        assert names[2:] == ["DataAppended", "StreamSegmentInfo"]
