"""The writer across a segment store restart: nothing lost, nothing written twice.

The segment store dies while the writer has events in flight, plain and inside an open transaction;
the writer reconnects (within ``networkTimeoutMs``), learns from ``AppendSetup`` which of its
events the store holds and sends the rest. Two backends:

* ``split``: a real Pravega 0.13 as separate JVMs (:mod:`sparkflow_testing.pravega.split`: ZooKeeper
  and a bookie, the segment store with a BookKeeper durable log and file-system long-term storage,
  the controller). The segment store is SIGKILLed and started again while the controller and the
  bookie keep running, as in a production deployment. One deployment for the module.
* ``emulator``: the project's emulator with a data directory, restarted whole.

The standalone cannot take part: it keeps segments in memory and restarts only as a whole.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_pravega_writer import segment_events

from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.controller_client import ConnectionSettings, shared_controller
from connectors.pravega.event_writer import PravegaEventWriter
from connectors.pravega.transactional_writer import PravegaTransactionalWriter
from sparkflow_testing.maven import java_and_maven_available
from sparkflow_testing.pravega.cluster import PravegaCluster, start_emulator, unique_name
from sparkflow_testing.pravega.split import PravegaSplitCluster, pravega_split_cluster

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


@dataclass
class Restartable:
    """A Pravega whose segment store a test can kill (``kill``) and start again (``start``)."""

    cluster: PravegaCluster
    kill: Callable[[], None]
    start: Callable[[], None]
    real: bool


@pytest.fixture(scope="module")
def split_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PravegaSplitCluster]:
    if not java_and_maven_available():  # as the session's backend falls back to the emulator
        pytest.skip("the real Pravega runs from Maven artifacts: java and mvn are not on the PATH")
    with pravega_split_cluster(tmp_path_factory.mktemp("pravega-split")) as cluster:
        yield cluster


@pytest.fixture(params=["split", "emulator"])
def restartable(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Restartable]:
    if request.param == "split":
        split: PravegaSplitCluster = request.getfixturevalue("split_cluster")
        yield Restartable(split.cluster, split.kill_segment_store, split.start_segment_store, real=True)
        return
    with start_emulator(data_dir=tmp_path / "data", log_path=tmp_path / "emulator.log") as emulator:
        ports = emulator.ports

        def start() -> None:
            emulator.start(ports["controller_port"], ports["segment_store_port"], ports["control_port"])

        yield Restartable(emulator.cluster, emulator.stop, start, real=False)


def _restart_later(target: Restartable, delay_s: float) -> threading.Thread:
    """Kill the segment store now and start it again after ``delay_s`` on another thread, while the
    test's thread keeps writing (its appends wait for the store within ``networkTimeoutMs``)."""
    target.kill()

    def start() -> None:
        time.sleep(delay_s)
        target.start()

    thread = threading.Thread(target=start, name="segment-store-restart")
    thread.start()
    return thread


def _wait_sent(settings: ConnectionSettings, scope: str, stream: str, above: int) -> None:
    """Wait until the stream's segments hold more than ``above`` bytes and stop growing (the writer's
    sent blocks are in the store; what it still queues is not sent before a flush)."""
    segments = [s.segment_id for s in shared_controller(settings).current_segments(scope, stream)]
    client = PravegaClusterClient(settings)
    try:
        deadline = time.monotonic() + 60
        last = -1
        while True:
            held = sum(client.info(scope, stream, seg).tail for seg in segments)
            if held > above and held == last:
                return
            assert time.monotonic() < deadline, (
                f"{scope}/{stream} holds {held} bytes, more than {above} wanted"
            )
            last = held
            time.sleep(1.0)
    finally:
        client.close()


def _keyed(prefix: str, start: int, count: int, pad: int = 0) -> tuple[list[bytes], list[str | None]]:
    return (
        [f"{prefix}:k{i % 8}:{i:06d}:{'x' * pad}".encode() for i in range(start, start + count)],
        [f"k{i % 8}" for i in range(start, start + count)],
    )


def _setup(
    target: Restartable, segments: int, read_timeout_ms: int = 30_000
) -> tuple[ConnectionSettings, str, str]:
    settings = ConnectionSettings(
        target.cluster.controller_uri, network_timeout_ms=120_000, read_timeout_ms=read_timeout_ms
    )
    controller = shared_controller(settings)
    scope, stream = unique_name("rsc"), unique_name("rst")
    controller.create_scope(scope)
    controller.create_stream(scope, stream, segments)
    return settings, scope, stream


def _read(cluster: PravegaCluster, settings: ConnectionSettings, scope: str, stream: str) -> list[bytes]:
    segments = {s.segment_id for s in shared_controller(settings).current_segments(scope, stream)}
    got = segment_events(cluster, scope, stream, segments)
    for events in got.values():
        per_key: dict[bytes, list[bytes]] = defaultdict(list)
        for e in events:
            per_key[e.split(b":")[1]].append(e)
        assert all(v == sorted(v) for v in per_key.values())
    return [e for events in got.values() for e in events]


def test_plain_writes_across_a_restart(restartable: Restartable) -> None:
    """At least once: events the store held without the writer seeing their acknowledgement are not
    sent again (``AppendSetup``'s last event number), the others are, in order, once each."""
    settings, scope, stream = _setup(restartable, 3)
    writer = PravegaEventWriter(settings, scope, stream)
    try:
        first, first_keys = _keyed("p", 0, 5000)
        writer.write_many(first, first_keys)
        writer.flush()
        second, second_keys = _keyed("p", 5000, 20_000, pad=200)  # 4.3 MB: full blocks are sent
        writer.write_many(second, second_keys)  # their acknowledgements are not read yet
        if restartable.real:
            _wait_sent(settings, scope, stream, sum(8 + len(e) for e in first))  # durable in the bookie
        restarting = _restart_later(restartable, 2.0)
        third, third_keys = _keyed("p", 25_000, 5000)
        writer.write_many(third, third_keys)  # waits for the store
        writer.flush()
        restarting.join()
        assert writer.reconnects >= 1
        if restartable.real:
            assert writer.held_at_setup > 0, "no event the store held was left unacknowledged by the kill"
        writer.close()
    finally:
        writer.abandon()
    got = _read(restartable.cluster, settings, scope, stream)
    assert len(got) == 30_000
    assert sorted(got) == sorted(first + second + third)


def test_a_transaction_across_a_restart(restartable: Restartable) -> None:
    """Exactly once: a transaction open across the restart commits every event once; none is visible
    before the commit. A 5 s read timeout: right after a segment store restart the controller took
    longer to answer ``commitTransaction`` (it waits for its own commit-stream writers to reconnect),
    so the commit is sent again while the transaction is still ``OPEN``."""
    settings, scope, stream = _setup(restartable, 2, read_timeout_ms=5_000)
    txn = PravegaTransactionalWriter(settings, scope, stream).begin()
    first, first_keys = _keyed("t", 0, 10_000)
    txn.write_many(first, first_keys)
    restarting = _restart_later(restartable, 2.0)
    second, second_keys = _keyed("t", 10_000, 5000)
    txn.write_many(second, second_keys)
    txn.flush()
    restarting.join()
    assert txn.reconnects >= 1
    assert _read(restartable.cluster, settings, scope, stream) == []
    txn.commit()
    got = _read(restartable.cluster, settings, scope, stream)
    assert len(got) == 15_000
    assert sorted(got) == sorted(first + second)


def test_a_commit_sent_while_the_segment_store_is_down(split_cluster: PravegaSplitCluster) -> None:
    """The controller keeps its metadata in segment store tables: a commit sent while the store is
    down gets no answer within ``readTimeoutMs`` (5 s; the store is down for 8). The writer asks
    the transaction's state once the store is back (``OPEN``: the commit was not taken, so it is sent
    again; ``COMMITTING``: it was) and the transaction commits once."""
    target = Restartable(
        split_cluster.cluster, split_cluster.kill_segment_store, split_cluster.start_segment_store, real=True
    )
    settings, scope, stream = _setup(target, 2, read_timeout_ms=5_000)
    txn = PravegaTransactionalWriter(settings, scope, stream).begin()
    events, keys = _keyed("c", 0, 2000)
    txn.write_many(events, keys)
    txn.flush()
    restarting = _restart_later(target, 8.0)
    try:
        txn.commit()
    finally:
        restarting.join()
    got = _read(split_cluster.cluster, settings, scope, stream)
    assert sorted(got) == sorted(events)


SINK_EVENTS = 4000


@pytest.mark.spark
@pytest.mark.parametrize("exactly_once", ["true", "false"])
def test_the_sink_across_a_segment_store_kill(
    split_cluster: PravegaSplitCluster, spark: Any, tmp_path: Path, exactly_once: str
) -> None:
    """The Spark sink, both modes, while its tasks write: the segment store is SIGKILLed once two
    tasks (``local[2]``) are writing and started again 2 s later. The job succeeds and every event
    is in the stream once (exactly once: the tasks' transactions survive the kill and are committed
    after it; at least once: the writers' reconnects resend only what the store lacks, so no
    duplicate either)."""
    from pyspark.sql import functions as F

    target = Restartable(
        split_cluster.cluster, split_cluster.kill_segment_store, split_cluster.start_segment_store, real=True
    )
    settings, scope, stream = _setup(target, 2)
    started = tmp_path / "started"
    started.mkdir()

    @F.udf("string")
    def slow(n: int, task: int) -> str:  # about 4 s per task: the kill lands while tasks write
        (started / str(task)).touch()
        time.sleep(0.004)
        return f"e:{n:08d}"

    df = spark.range(SINK_EVENTS).repartition(4).select(slow("id", F.spark_partition_id()).alias("event"))
    options = {
        "controller": split_cluster.controller_uri,
        "scope": scope,
        "stream": stream,
        "exactly_once": exactly_once,
    }
    killed: list[float] = []
    failure: list[BaseException] = []

    def kill_while_tasks_write() -> None:
        try:
            deadline = time.monotonic() + 120
            while len(list(started.iterdir())) < 2:  # local[2]: two tasks at a time
                if time.monotonic() > deadline:
                    return
                time.sleep(0.1)
            killed.append(time.monotonic())
            _restart_later(target, 2.0).join()
        except BaseException as e:  # reported on the test's thread
            failure.append(e)

    # the job runs on the test's thread (Spark found no "pravega" source for a save() on another one)
    killer = threading.Thread(target=kill_while_tasks_write, name="segment-store-killer")
    killer.start()
    try:
        df.write.format("pravega").options(**options).mode("append").save()
        ended = time.monotonic()
    finally:
        killer.join(300)
    assert not failure, failure
    assert killed and killed[0] < ended, "the job ended before the segment store was killed"
    got = _read(split_cluster.cluster, settings, scope, stream)
    expected = sorted(f"e:{i:08d}".encode() for i in range(SINK_EVENTS))
    assert sorted(got) == expected, f"{len(got)} events, {len(set(got))} distinct of {SINK_EVENTS}"
