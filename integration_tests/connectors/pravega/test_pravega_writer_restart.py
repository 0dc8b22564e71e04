"""The writer across a segment store restart: nothing lost, nothing written twice.

The server restarts while the writer has events in flight, plain and inside an open transaction;
the writer reconnects (within ``networkTimeoutMs``), learns from ``AppendSetup`` which of its
events the store holds and sends the rest. This runs on the project's emulator with a data
directory: real Pravega standalone restarts only as a whole (one JVM with an in-process ZooKeeper)
and keeps its segments in memory, so a restarted standalone has no streams left to write to; the
fixture offers no restart for it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_pravega_writer import segment_events

from connectors.pravega.controller_client import ConnectionSettings, shared_controller
from connectors.pravega.event_writer import PravegaEventWriter
from connectors.pravega.transactional_writer import PravegaTransactionalWriter
from sparkflow_testing.pravega.cluster import EmulatorProcess, start_emulator, unique_name

pytestmark = pytest.mark.integration


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[EmulatorProcess]:
    with start_emulator(data_dir=tmp_path / "data", log_path=tmp_path / "emulator.log") as process:
        yield process


def _keyed(prefix: str, start: int, count: int) -> tuple[list[bytes], list[str | None]]:
    return (
        [f"{prefix}:k{i % 8}:{i:06d}".encode() for i in range(start, start + count)],
        [f"k{i % 8}" for i in range(start, start + count)],
    )


def _setup(emulator: EmulatorProcess, segments: int) -> tuple[ConnectionSettings, str, str]:
    settings = ConnectionSettings(
        emulator.cluster.controller_uri, network_timeout_ms=60_000, read_timeout_ms=5_000
    )
    controller = shared_controller(settings)
    scope, stream = unique_name("rsc"), unique_name("rst")
    controller.create_scope(scope)
    controller.create_stream(scope, stream, segments)
    return settings, scope, stream


def _read(emulator: EmulatorProcess, settings: ConnectionSettings, scope: str, stream: str) -> list[bytes]:
    segments = {s.segment_id for s in shared_controller(settings).current_segments(scope, stream)}
    got = segment_events(emulator.cluster, scope, stream, segments)
    for events in got.values():
        per_key: dict[bytes, list[bytes]] = defaultdict(list)
        for e in events:
            per_key[e.split(b":")[1]].append(e)
        assert all(v == sorted(v) for v in per_key.values())
    return [e for events in got.values() for e in events]


def test_plain_writes_across_a_restart(emulator: EmulatorProcess) -> None:
    settings, scope, stream = _setup(emulator, 3)
    writer = PravegaEventWriter(settings, scope, stream)
    first, first_keys = _keyed("p", 0, 5000)
    writer.write_many(first, first_keys)
    writer.flush()
    second, second_keys = _keyed("p", 5000, 20_000)
    writer.write_many(second, second_keys)  # blocks sent, some not yet acknowledged
    emulator.restart()
    third, third_keys = _keyed("p", 25_000, 5000)
    writer.write_many(third, third_keys)
    writer.flush()
    assert writer.reconnects >= 1
    writer.close()
    got = _read(emulator, settings, scope, stream)
    assert len(got) == 30_000
    assert sorted(got) == sorted(first + second + third)


def test_a_transaction_across_a_restart(emulator: EmulatorProcess) -> None:
    settings, scope, stream = _setup(emulator, 2)
    txn = PravegaTransactionalWriter(settings, scope, stream).begin()
    first, first_keys = _keyed("t", 0, 10_000)
    txn.write_many(first, first_keys)
    emulator.restart()
    second, second_keys = _keyed("t", 10_000, 5000)
    txn.write_many(second, second_keys)
    txn.flush()
    assert txn.reconnects >= 1
    assert _read(emulator, settings, scope, stream) == []
    txn.commit()
    got = _read(emulator, settings, scope, stream)
    assert len(got) == 15_000
    assert sorted(got) == sorted(first + second)
