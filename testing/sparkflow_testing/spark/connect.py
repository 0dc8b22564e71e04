"""A Spark Connect server for tests, started from the installed pyspark wheel.

The wheel carries the server (``jars/spark-connect_2.13-<version>.jar``) and ``bin/spark-submit``;
``SparkConnectServer.start()`` runs ``org.apache.spark.sql.connect.service.SparkConnectServer``
through ``spark-submit`` in its own process group (what ``sbin/start-connect-server.sh`` does,
without the daemon wrapper), bound to the loopback interface on a free port, and waits until the
gRPC port accepts connections. ``url`` is what ``SparkSession.builder.remote(...)`` takes.

The server's Python workers look up and run the Python data sources, so ``PYSPARK_PYTHON`` (and
``SPARKFLOW_DEFAULT_PARALLELISM``, if wanted) go into the server's environment; the client needs
only pyspark with its Connect dependencies (grpcio, grpcio-status, googleapis-common-protos,
zstandard). A client session sets ``SPARK_CONNECT_MODE_ENABLED`` in its process's environment, which
switches PySpark to Connect for the whole process: keep it out of a process that uses a classic
session.

Threading: none.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from subprocess import Popen

from sparkflow_testing.jvm import TEST_JVM_FLAGS
from sparkflow_testing.processes import free_port, spawn_group, stop_group, wait_listening
from sparkflow_testing.spark.cluster import pyspark_home

__all__ = ["SparkConnectServer"]

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
START_TIMEOUT_S = 180.0


@dataclass
class SparkConnectServer:
    """A running Spark Connect server; ``stop()`` ends its process group (driver and Python workers)."""

    url: str
    log: Path
    _proc: Popen[bytes]
    _owned_dir: tempfile.TemporaryDirectory[str] | None = None

    @classmethod
    def start(
        cls,
        master: str = "local[2]",
        conf: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        workdir: Path | None = None,
    ) -> SparkConnectServer:
        """Start a server on ``master`` with extra ``conf`` and ``env``; wait until it listens."""
        owned = None
        if workdir is None:
            owned = tempfile.TemporaryDirectory(prefix="spark-connect-")
            workdir = Path(owned.name)
        port = free_port()
        home = pyspark_home()
        settings = {
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(port),
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            **(conf or {}),
        }
        environment = {"SPARK_HOME": str(home), "PYSPARK_PYTHON": sys.executable, **(env or {})}
        cmd = [
            "env",
            *(f"{k}={v}" for k, v in environment.items()),
            str(home / "bin" / "spark-submit"),
            "--class", SERVER_CLASS,
            "--name", "sparkflow-connect-tests",
            "--master", master,
            "--driver-java-options", " ".join(TEST_JVM_FLAGS),
            *(a for k, v in settings.items() for a in ("--conf", f"{k}={v}")),
        ]  # fmt: skip
        log = workdir / "connect-server.log"
        proc = spawn_group(cmd, log, cwd=workdir)
        server = cls(f"sc://127.0.0.1:{port}", log, proc, owned)
        try:
            wait_listening("127.0.0.1", port, proc, START_TIMEOUT_S, log, "spark connect server")
        except BaseException:
            server.stop()
            raise
        return server

    def stop(self) -> None:
        """Stop the server and everything it started."""
        stop_group(self._proc)
        if self._owned_dir is not None:
            self._owned_dir.cleanup()

    def __enter__(self) -> SparkConnectServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
