"""``KafkaBroker``: a running local Kafka-protocol broker, its client helpers and lifecycle (BROKERS.md).

Every launcher (:mod:`sparkflow_testing.kafka.apache_kafka`, :mod:`sparkflow_testing.kafka.stand_ins`,
:mod:`sparkflow_testing.kafka.container`) returns one: ``create_topic(partitions)``, ``producer()``,
``consumer()`` and ``admin()`` helpers; ``stop()`` ends it (the broker's whole process group). Each
broker declares the features it gets wrong in ``gaps`` (``Gap`` names); a test that needs one asks
``broker.gap_reason(Gap.X)`` and skips with that reason.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from sparkflow_testing.gaps import DeclaresGaps
from sparkflow_testing.processes import exit_report, spawn_group, stop_group, wait_listening

__all__ = ["BIG_FETCH_BYTES", "START_TIMEOUT_S", "Gap", "KafkaBroker"]

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
    LOG_APPEND_TIME = (
        "a topic's message.timestamp.type=LogAppendTime is ignored: records keep the producer's "
        "CreateTime and timestampType 0 (measured on tansu 0.6.0)"
    )
    KIP848 = "no KIP-848 consumer group protocol"
    SMALL_FETCHES = (
        "a fetch response holds a few KiB whatever max.partition.fetch.bytes allows (measured on tansu "
        "0.6.0: 113 records of ~160 bytes, the first fetch of a 1,500-record log)"
    )
    TOPIC_COMPRESSION = (
        "a topic's compression.type does not compress what producers send uncompressed (measured on "
        "noida-db 0.2.3: no LZ4 or zstd frame in what the compiled reader fetched from such a topic)"
    )
    RETENTION = (
        "a topic's retention.ms does not remove records older than it (measured: nothing removed "
        "within 20 s with retention.ms=300000, segment.ms=60000 and 10-minute-old records)"
    )


@dataclass
class KafkaBroker(DeclaresGaps):
    """A running broker and client helpers for it."""

    kind: str
    bootstrap: str
    gaps: frozenset[Gap] = frozenset()
    producer_defaults: dict[str, Any] = field(default_factory=dict)
    topic_defaults: dict[str, str] = field(default_factory=dict)
    """Topic settings ``create_topic`` adds unless given (a stand-in's workaround, e.g. noida-db's)."""
    _proc: subprocess.Popen[bytes] | None = None
    _cmd: list[str] | None = None
    _log: Path | None = None
    _workdir: Path | None = None
    _container: Any = None

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
        new = NewTopic(topic, partitions, 1, config={**self.topic_defaults, **config})
        futures = admin.create_topics([new])
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
    @property
    def process_group(self) -> int | None:
        """The process group of the running broker (its launcher's pid); ``None`` if killed or not ours."""
        return self._proc.pid if self._proc is not None else None

    def exit_reason(self) -> str | None:
        """Why the broker's process exited on its own (its error lines, free disk and memory), or
        ``None`` while it runs (or was stopped by us, or is not a process of ours).

        For a failure message: a query that failed on a broker that died says so first.
        """
        if self._proc is None or self._proc.poll() is None:
            return None
        log = self._log.read_text(errors="replace") if self._log is not None and self._log.exists() else ""
        return exit_report(self.kind, self._proc.returncode, log)

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
        """Stop the broker, keeping its data (for ``restart``); returns once its process group is gone."""
        if self._proc is not None:
            stop_group(self._proc)
            self._proc = None

    def restart(self) -> None:
        """Start the broker again on the same port and data directory; wait until it is the one listening."""
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
