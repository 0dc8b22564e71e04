"""Interoperability with the official Pravega client (PyPI ``pravega``, cp311 wheels only).

Events written by the project's writer (plain and in transactions) are read by the official
client's reader group, and events the official client writes (plain and in a transaction) are read
with the project's segment reads and found in the segment the project's router picks for their
routing key, non-ASCII keys included. The official client runs in a spawned child: it holds the GIL
while it blocks. Where it is not installed (Python 3.12 and later) the module is skipped.
"""

from __future__ import annotations

import time
from importlib.util import find_spec

import pytest
from test_emulator_conformance import _read_all
from test_pravega_writer import segment_events

from connectors.pravega.controller_client import ConnectionSettings, shared_controller
from connectors.pravega.event_router import EventRouter
from connectors.pravega.event_writer import PravegaEventWriter
from connectors.pravega.transactional_writer import PravegaTransactionalWriter
from sparkflow_testing.pravega.cluster import PravegaCluster, run_isolated, unique_name

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        find_spec("pravega_client") is None,
        reason="the official client (PyPI pravega 0.3.8) is not installed: "
        "it has wheels for CPython 3.11 only",
    ),
]

KEYS = [f"k{i}" for i in range(40)] + ["é", "ключ", "日本", "a€b", "emoji-🙂", ""]


# --- run in the child -----------------------------------------------------------------------------
def _official_read(uri: str, scope: str, stream: str, expected: int, timeout: float = 60.0) -> list[bytes]:
    import pravega_client

    manager = pravega_client.StreamManager(uri)
    group = manager.create_reader_group(unique_name("rg"), scope, stream, False)
    reader = group.create_reader("r1")

    try:
        return _read_all(reader, expected, timeout=timeout)
    finally:
        reader.reader_offline()


def _official_write(
    uri: str, scope: str, stream: str, plain: list[tuple[str, bytes]], txn: list[tuple[str, bytes]]
) -> int:
    import pravega_client

    manager = pravega_client.StreamManager(uri)
    writer = manager.create_writer(scope, stream, 10_000)
    for key, payload in plain:
        writer.write_event_bytes(payload, key)
    writer.flush()
    txn_writer = manager.create_transaction_writer(scope, stream, 7)
    transaction = txn_writer.begin_txn()
    for key, payload in txn:
        transaction.write_event_bytes(payload, key)
    transaction.commit()  # returns once the controller accepted it (COMMITTING)
    return int(transaction.get_txn_id())


# --- tests ----------------------------------------------------------------------------------------
def _stream(cluster: PravegaCluster, segments: int) -> tuple[ConnectionSettings, str, str]:
    settings = ConnectionSettings(cluster.controller_uri)
    controller = shared_controller(settings)
    scope, stream = unique_name("isc"), unique_name("ist")
    controller.create_scope(scope)
    controller.create_stream(scope, stream, segments)
    return settings, scope, stream


def _order_per_key(events: list[bytes]) -> None:
    last: dict[bytes, int] = {}
    for e in events:
        key, seq = e.rsplit(b"|", 1)
        assert int(seq) > last.get(key, -1), e
        last[key] = int(seq)


def test_ours_written_official_read(any_pravega_cluster: PravegaCluster) -> None:
    settings, scope, stream = _stream(any_pravega_cluster, 3)
    plain = [f"{KEYS[i % len(KEYS)]}|{i}".encode() for i in range(3000)]
    writer = PravegaEventWriter(settings, scope, stream)
    writer.write_many(plain, [KEYS[i % len(KEYS)] for i in range(3000)])
    writer.close()
    txns = PravegaTransactionalWriter(settings, scope, stream)
    committed = txns.begin()
    in_txn = [f"{KEYS[i % len(KEYS)]}|{i}".encode() for i in range(3000, 4000)]
    committed.write_many(in_txn, [KEYS[i % len(KEYS)] for i in range(3000, 4000)])
    aborted = txns.begin()
    aborted.write_many([b"aborted|0"] * 50)
    aborted.flush()
    aborted.abort()
    committed.commit()
    got = run_isolated(_official_read, any_pravega_cluster.controller_uri, scope, stream, 4000, timeout=180)
    assert sorted(got) == sorted(plain + in_txn)
    _order_per_key(got)


def test_official_written_ours_routed_alike(any_pravega_cluster: PravegaCluster) -> None:
    settings, scope, stream = _stream(any_pravega_cluster, 8)
    plain = [(KEYS[i % len(KEYS)], f"{KEYS[i % len(KEYS)]}|{i}".encode()) for i in range(1000)]
    txn = [(KEYS[i % len(KEYS)], f"{KEYS[i % len(KEYS)]}|{i}".encode()) for i in range(1000, 1300)]
    txn_id = run_isolated(
        _official_write, any_pravega_cluster.controller_uri, scope, stream, plain, txn, timeout=180
    )
    deadline = time.monotonic() + 60
    while (state := shared_controller(settings).txn_state(scope, stream, txn_id)) != "COMMITTED":
        assert state == "COMMITTING" and time.monotonic() < deadline, state
        time.sleep(0.1)
    segments = shared_controller(settings).current_segments(scope, stream)
    router = EventRouter(segments)
    got = segment_events(any_pravega_cluster, scope, stream, {s.segment_id for s in segments})
    assert sorted(e for evs in got.values() for e in evs) == sorted(p for _k, p in plain + txn)
    for seg, events in got.items():
        for e in events:
            key = e.rsplit(b"|", 1)[0].decode()
            assert router.segment_for(key).segment_id == seg, f"key {key!r}"
        _order_per_key(events)
