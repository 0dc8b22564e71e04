"""The project's Pravega writer on real Pravega standalone and on the emulator.

Routing (each key in the segment the official clients' hash picks, order per key), scaling while
writing (the sealed segment's unacknowledged events go to the successors, nothing lost or doubled,
order per key across the scale), transactions (nothing visible before commit, all after, nothing
after abort), and resends: an append whose acknowledgement is lost is not stored twice, an append
that never arrived is sent again, through a ``FaultProxy`` between the writer and the segment store.
"""

from __future__ import annotations

import struct
import time
from collections import defaultdict

import pytest

from connector_base import ConnectorError
from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.controller_client import ConnectionSettings, segment_name, shared_controller
from connectors.pravega.event_router import EventRouter
from connectors.pravega.event_writer import PravegaEventWriter
from connectors.pravega.segment_writer import SegmentWriter
from connectors.pravega.transactional_writer import PravegaTransactionalWriter
from sparkflow_testing.network.fault_proxy import Direction, FaultProxy
from sparkflow_testing.pravega.cluster import PravegaCluster, unique_name

pytestmark = pytest.mark.integration


def _settings(cluster: PravegaCluster, **extra: int) -> ConnectionSettings:
    return ConnectionSettings(cluster.controller_uri, **extra)  # type: ignore[arg-type]


def _stream(cluster: PravegaCluster, segments: int) -> tuple[str, str]:
    controller = shared_controller(_settings(cluster))
    scope, stream = unique_name("wsc"), unique_name("wst")
    controller.create_scope(scope)
    assert controller.create_stream(scope, stream, segments)
    return scope, stream


def _events(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        type_code, length = struct.unpack_from(">ii", data, pos)
        assert type_code == 0
        out.append(data[pos + 8 : pos + 8 + length])
        pos += 8 + length
    return out


def segment_events(
    cluster: PravegaCluster, scope: str, stream: str, segment_ids: set[int]
) -> dict[int, list[bytes]]:
    """Every event of each segment, in order."""
    client = PravegaClusterClient(_settings(cluster))
    try:
        out = {}
        for seg in segment_ids:
            info = client.info(scope, stream, seg)
            out[seg] = _events(client.read_bytes(scope, stream, seg, info.head, info.tail))
        return out
    finally:
        client.close()


def _keyed(prefix: str, count: int, keys: int = 16) -> tuple[list[bytes], list[str | None]]:
    return (
        [f"{prefix}:k{i % keys}:{i:07d}".encode() for i in range(count)],
        [f"k{i % keys}" for i in range(count)],
    )


def test_events_land_where_the_router_puts_them_in_order(any_pravega_cluster: PravegaCluster) -> None:
    scope, stream = _stream(any_pravega_cluster, 4)
    payloads, keys = _keyed("a", 5000)
    writer = PravegaEventWriter(_settings(any_pravega_cluster), scope, stream)
    writer.write_many(payloads[:10], keys[:10])
    for payload, key in zip(payloads[10:], keys[10:], strict=True):
        writer.write(payload, key)
    writer.close()
    segments = shared_controller(_settings(any_pravega_cluster)).current_segments(scope, stream)
    router = EventRouter(segments)
    got = segment_events(any_pravega_cluster, scope, stream, {s.segment_id for s in segments})
    assert sorted(e for evs in got.values() for e in evs) == sorted(payloads)
    for seg, evs in got.items():
        for e in evs:
            assert router.segment_for(e.split(b":")[1].decode()).segment_id == seg
        per_key: dict[bytes, list[bytes]] = defaultdict(list)
        for e in evs:
            per_key[e.split(b":")[1]].append(e)
        assert all(v == sorted(v) for v in per_key.values())


def test_scaling_while_writing_loses_and_doubles_nothing(any_pravega_cluster: PravegaCluster) -> None:
    scope, stream = _stream(any_pravega_cluster, 2)
    settings = _settings(any_pravega_cluster)
    controller = shared_controller(settings)
    before = {s.segment_id for s in controller.current_segments(scope, stream)}
    payloads, keys = _keyed("s", 30_000, keys=32)
    writer = PravegaEventWriter(settings, scope, stream)
    writer.write_many(payloads[:10_000], keys[:10_000])  # some acknowledged, some in flight
    first = min(before)
    any_pravega_cluster.admin.split(scope, stream, first, parts=2)
    writer.write_many(payloads[10_000:], keys[10_000:])
    writer.close()
    after = {s.segment_id for s in controller.current_segments(scope, stream)}
    assert after - before, "the split created no successors"
    got = segment_events(any_pravega_cluster, scope, stream, before | after)
    everything = [e for evs in got.values() for e in evs]
    assert len(everything) == len(payloads)
    assert sorted(everything) == sorted(payloads)
    # order per key: the sealed segment's events of a key come before its successors', each in order
    per_key: dict[bytes, list[bytes]] = defaultdict(list)
    for seg in sorted(got, key=lambda s: (s >> 32, s & 0xFFFFFFFF)):
        for e in got[seg]:
            per_key[e.split(b":")[1]].append(e)
    assert all(v == sorted(v) for v in per_key.values())
    successors = after - before
    assert sum(len(got[s]) for s in successors) > 0


def test_transactions_commit_all_and_abort_nothing(any_pravega_cluster: PravegaCluster) -> None:
    scope, stream = _stream(any_pravega_cluster, 3)
    settings = _settings(any_pravega_cluster)
    segments = {s.segment_id for s in shared_controller(settings).current_segments(scope, stream)}
    writer = PravegaTransactionalWriter(settings, scope, stream)
    kept = writer.begin()
    payloads, keys = _keyed("t", 3000)
    kept.write_many(payloads, keys)
    kept.flush()
    dropped = writer.begin()
    dropped.write_many([b"aborted"] * 100)
    dropped.flush()
    assert kept.state() == "OPEN"
    assert sum(len(v) for v in segment_events(any_pravega_cluster, scope, stream, segments).values()) == 0
    dropped.abort()
    kept.ping()
    kept.commit()
    got = segment_events(any_pravega_cluster, scope, stream, segments)
    assert sorted(e for evs in got.values() for e in evs) == sorted(payloads)
    router = EventRouter(shared_controller(settings).current_segments(scope, stream))
    for seg, evs in got.items():
        assert all(router.segment_for(e.split(b":")[1].decode()).segment_id == seg for e in evs)
    assert dropped.state() == "ABORTED"
    with pytest.raises(ConnectorError):  # an aborted transaction takes no more events
        dropped.write_many([b"late"])
        dropped.flush()


def _first_segment(cluster: PravegaCluster, scope: str, stream: str) -> int:
    return min(s.segment_id for s in shared_controller(_settings(cluster)).current_segments(scope, stream))


def _proxied_writer(cluster: PravegaCluster, scope: str, stream: str, proxy: FaultProxy) -> SegmentWriter:
    host, port = proxy.address.rsplit(":", 1)
    return SegmentWriter(
        segment_name(scope, stream, _first_segment(cluster, scope, stream)),
        endpoint=lambda: (host, int(port)),
        token=lambda: "",
        read_timeout_s=2.0,
        network_timeout_ms=30_000,
    )


def _tail(cluster: PravegaCluster, scope: str, stream: str) -> int:
    client = PravegaClusterClient(_settings(cluster))
    try:
        return client.info(scope, stream, _first_segment(cluster, scope, stream)).tail
    finally:
        client.close()


@pytest.mark.parametrize("lost", [Direction.DOWNSTREAM, Direction.UPSTREAM])
def test_a_resent_append_is_stored_once(any_pravega_cluster: PravegaCluster, lost: Direction) -> None:
    """DOWNSTREAM: the store took the block, its acknowledgement is lost; UPSTREAM: the block is lost."""
    scope, stream = _stream(any_pravega_cluster, 1)
    segment = _first_segment(any_pravega_cluster, scope, stream)
    endpoint = shared_controller(_settings(any_pravega_cluster)).endpoint(scope, stream, segment)
    with FaultProxy(*endpoint) as proxy:
        writer = _proxied_writer(any_pravega_cluster, scope, stream, proxy)
        for i in range(100):
            writer.append(f"before:{i}".encode(), None)
        writer.flush()
        stored = _tail(any_pravega_cluster, scope, stream)
        assert proxy.half_open(lost) == 1
        for i in range(100):
            writer.append(f"after:{i}".encode(), None)
        writer.send_pending()
        if lost is Direction.DOWNSTREAM:  # wait until the store holds the block whose answer is lost
            deadline = time.monotonic() + 30
            while _tail(any_pravega_cluster, scope, stream) == stored and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _tail(any_pravega_cluster, scope, stream) > stored
        writer.flush()  # times out on the dead connection, reconnects, resends what is missing
        writer.close()
    assert writer.stats.reconnects >= 1
    if lost is Direction.DOWNSTREAM:
        assert writer.stats.resent_blocks == 0
    else:
        assert writer.stats.resent_blocks >= 1
    got = segment_events(any_pravega_cluster, scope, stream, {segment})[segment]
    assert got == [f"before:{i}".encode() for i in range(100)] + [f"after:{i}".encode() for i in range(100)]


def _watermark_bounds(event: bytes) -> tuple[int, int]:
    """Lower and upper time bound of a serialized ``Watermark`` (Pravega's ``VersionedSerializer``:
    format byte, object version 0, revision count, revision 0, its length, then the fields)."""
    _format, version, _count, revision, _length = struct.unpack_from(">bbbbi", event, 0)
    assert (version, revision) == (0, 0), (version, revision)
    lower, upper = struct.unpack_from(">qq", event, 8)
    return lower, upper


def test_noted_times_become_the_streams_watermarks(any_pravega_cluster: PravegaCluster) -> None:
    """Pravega's controller turns writers' noted times into watermarks on ``_MARK<stream>``."""
    if any_pravega_cluster.is_emulator:
        pytest.skip("emulator: accepts noteTimestampFromWriter and ignores it; it writes no _MARK stream")
    scope, stream = _stream(any_pravega_cluster, 2)
    settings = _settings(any_pravega_cluster)
    writer = PravegaEventWriter(settings, scope, stream)
    noted = []
    for round_ in range(3):
        payloads, keys = _keyed(f"w{round_}", 200)
        writer.write_many(payloads, keys)
        noted.append(1_700_000_000_000 + round_ * 1000)
        writer.note_time(noted[-1])
        assert all(offset > 0 for offset in writer.position.values()), writer.position
        time.sleep(1)
    marks = f"_MARK{stream}"
    deadline = time.monotonic() + 60  # the controller computes watermarks every 10 s by default
    bounds: list[tuple[int, int]] = []
    while time.monotonic() < deadline and not bounds:
        segments = {s.segment_id for s in shared_controller(settings).current_segments(scope, marks)}
        bounds = [
            _watermark_bounds(e)
            for evs in segment_events(any_pravega_cluster, scope, marks, segments).values()
            for e in evs
        ]
        time.sleep(1)
    writer.close()
    assert bounds, f"no watermark on {scope}/{marks} within 60 s"
    for lower, upper in bounds:
        assert noted[0] <= lower <= upper <= noted[-1], (bounds, noted)
