"""A real Pravega 0.13.0 as separate JVMs, so that its segment store can be killed and restarted alone.

The standalone (:mod:`.standalone`) cannot restart its segment store: it keeps segments in memory,
runs ZooKeeper in-process with a temporary data directory, and has no stop for one segment store.
:class:`PravegaSplitCluster` runs the pieces of a production deployment instead, each a child JVM in
its own process group, all from the standalone's Maven closure (:func:`standalone_classpath`: it
holds the segment store host, the controller, BookKeeper 4.14.1 and ZooKeeper 3.6.3, so nothing new
is downloaded):

1. ZooKeeper and one bookie in one JVM: Pravega's own
   ``io.pravega.segmentstore.storage.impl.bookkeeper.BookKeeperServiceRunner`` (system properties
   ``startZk``, ``zkPort``, ``basePort``, ``bookieCount``, ``zkLedgersPath``), which formats the
   ledgers path and starts a ``BookieServer``. One JVM for both saves a JVM on a small machine; only
   the segment store is restarted.
2. The segment store, ``io.pravega.segmentstore.server.host.ServiceStarter``, configured by the file
   named in ``pravega.configurationFile``: ``pravegaservice.dataLog.impl.name=BOOKKEEPER`` (the
   durable log in the bookie: ensemble, write and ack quorum of 1) and
   ``pravegaservice.storage.impl.name=FILESYSTEM`` (long-term storage under ``filesystem.root`` in
   the work directory), so what it acknowledged survives a SIGKILL: a restarted segment store
   recovers its containers from the log and the files.
3. The controller, ``io.pravega.controller.server.Main``, configured by the file named in
   ``conf.file`` (``controller.*`` keys), watermarks every second as on the standalone.

Classpath fixes for the controller, found by running it on Java 17 (it always starts its REST
server, which the standalone fixture turns off): Hadoop's Jersey 1.19 jars are left out (their
repackaged ASM comes first on the classpath and fails Jersey 2's scan with
``IllegalArgumentException`` in ``ClassVisitor.<init>``), and
``com.sun.xml.bind.v2.bytecode.ClassTailor.noOptimize=true`` keeps the old JAXB from injecting
accessor classes (``ExceptionInInitializerError`` in ``AccessorInjector`` on Java 17).

Every JVM has ``java.io.tmpdir`` in the work directory (the bookie's journal and ZooKeeper's data are
temporary directories there, which a SIGKILL leaves behind) and runs under a watchdog shell that
stops it if this process dies. Heaps are small (256 MiB each, the segment store's cache 64 MiB):
three JVMs on a two-core machine.

Threading: none; everything is called from the test's thread.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from sparkflow_testing.jvm import TEST_JVM_FLAGS
from sparkflow_testing.pravega.admin import admin_for
from sparkflow_testing.pravega.cluster import PravegaCluster
from sparkflow_testing.pravega.security import StandaloneSecurity
from sparkflow_testing.pravega.standalone import standalone_classpath, watched
from sparkflow_testing.processes import free_port, spawn_group, stop_group, wait_listening

__all__ = ["SPLIT_BACKEND", "PravegaSplitCluster", "pravega_split_cluster"]

SPLIT_BACKEND = "split"
"""``PravegaCluster.backend`` of a split deployment."""

START_TIMEOUT_S = 180.0
"""A cold start of a piece on a loaded two-core machine (about 5 s each when idle)."""

HEAP = "256m"
CLUSTER_NAME = "pravega-cluster"
CONTAINERS = 2
_CONTROLLER_LEFT_OUT = ("jersey-core-1.19", "jersey-server-1.19", "jersey-servlet-1.19",
                        "jersey-json-1.19", "jersey-guice-1.19", "jersey-client-1.19",
                        "jersey-apache-client4-1.19")  # fmt: skip

_LOGBACK = """<configuration>
  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <logger name="io.pravega" level="INFO"/>
  <root level="WARN"><appender-ref ref="OUT"/></root>
</configuration>
"""


def _tail(log: Path, lines: int = 15) -> str:
    """The last ``lines`` WARN/ERROR lines of ``log`` (or its last lines), for a start's error."""
    if not log.exists():
        return "(none)"
    text = log.read_text(errors="replace").splitlines()
    notable = [line for line in text if " WARN " in line or " ERROR " in line] or text
    return "\n  ".join(["", *notable[-lines:]])


def _properties(values: dict[str, str]) -> str:
    return "".join(f"{k}={v}\n" for k, v in values.items())


class PravegaSplitCluster:
    """ZooKeeper + bookie, segment store and controller as child JVMs (see the module docstring)."""

    def __init__(self, work_dir: Path, watermark_interval_s: int = 1) -> None:
        self.work_dir = work_dir
        self.watermark_interval_s = watermark_interval_s
        self.zk_port = 0
        self.bookie_port = 0
        self.segment_store_port = 0
        self.controller_port = 0
        self.rest_port = 0
        self.segment_store_starts: list[float] = []
        """Seconds each segment store start took until the store served a request."""
        self._bookie: subprocess.Popen[bytes] | None = None
        self._segment_store: subprocess.Popen[bytes] | None = None
        self._controller: subprocess.Popen[bytes] | None = None

    @property
    def controller_uri(self) -> str:
        """``tcp://`` URI of the controller."""
        return f"tcp://127.0.0.1:{self.controller_port}"

    @property
    def cluster(self) -> PravegaCluster:
        """The deployment as the tests' :class:`PravegaCluster` (controller URI and admin)."""
        return PravegaCluster(controller_uri=self.controller_uri, backend=SPLIT_BACKEND)

    # --- command lines ----------------------------------------------------------------------------
    def _java(self, name: str, main: str, props: dict[str, str], left_out: tuple[str, ...] = ()) -> list[str]:
        tmp = self.work_dir / "tmp" / name
        tmp.mkdir(parents=True, exist_ok=True)
        jars = [p for p in standalone_classpath() if not p.name.startswith(left_out)]
        logback = str(self.work_dir / "logback.xml")
        props = {"java.io.tmpdir": str(tmp), "logback.configurationFile": logback, **props}
        return watched(
            [
                "java", f"-Xmx{HEAP}", *TEST_JVM_FLAGS,
                *(f"-D{k}={v}" for k, v in props.items()),
                "-cp", ":".join(str(p) for p in jars), main,
            ],
            f"pravega-{name}",
        )  # fmt: skip

    def _bookie_command(self) -> list[str]:
        (self.work_dir / "ledgers").mkdir(parents=True, exist_ok=True)  # the runner's temp dir goes in it
        return self._java(
            "bookie",
            "io.pravega.segmentstore.storage.impl.bookkeeper.BookKeeperServiceRunner",
            {
                "startZk": "true",
                "zkPort": str(self.zk_port),
                "basePort": str(self.bookie_port),
                "bookieCount": "1",
                "zkLedgersPath": f"/pravega/{CLUSTER_NAME}/bookkeeper/ledgers",
                "ledgersDir": str(self.work_dir / "ledgers"),
                # A bookie whose disk is over 95% used turns read-only and the segment store finds
                # "Not enough bookies" (this machine's disk: 97% by BookKeeper's count). The
                # runner's configuration reads system properties when told to; a test's few MiB
                # need no such margin.
                "org.apache.bookkeeper.conf.readsystemproperties": "true",
                "diskUsageThreshold": "0.9999",
                "diskUsageWarnThreshold": "0.9998",
                "diskUsageLwmThreshold": "0.9997",
            },
        )

    def _segment_store_command(self) -> list[str]:
        config = self.work_dir / "segmentstore.properties"
        tier2 = self.work_dir / "tier2"
        tier2.mkdir(parents=True, exist_ok=True)
        zk = f"127.0.0.1:{self.zk_port}"
        config.write_text(
            _properties(
                {
                    "pravegaservice.clusterName": CLUSTER_NAME,
                    "pravegaservice.container.count": str(CONTAINERS),
                    "pravegaservice.service.listener.host.nameOrIp": "127.0.0.1",
                    "pravegaservice.service.listener.port": str(self.segment_store_port),
                    "pravegaservice.service.published.host.nameOrIp": "127.0.0.1",
                    "pravegaservice.zk.connect.uri": zk,
                    "pravegaservice.dataLog.impl.name": "BOOKKEEPER",
                    "pravegaservice.storage.impl.name": "FILESYSTEM",
                    "pravegaservice.storage.layout": "CHUNKED_STORAGE",
                    "pravegaservice.cache.size.max": str(64 * 1024 * 1024),
                    "pravegaservice.rest.listener.enable": "false",
                    "pravegaservice.admin.gateway.enable": "false",
                    "filesystem.root": str(tier2),
                    "bookkeeper.zk.connect.uri": zk,
                    "bookkeeper.ensemble.size": "1",
                    "bookkeeper.write.quorum.size": "1",
                    "bookkeeper.ack.quorum.size": "1",
                    "autoScale.controller.connect.uri": self.controller_uri,
                    "metrics.statistics.enable": "false",
                }
            )
        )
        return self._java(
            "segmentstore",
            "io.pravega.segmentstore.server.host.ServiceStarter",
            {"pravega.configurationFile": str(config)},
        )

    def _controller_command(self) -> list[str]:
        config = self.work_dir / "controller.properties"
        config.write_text(
            _properties(
                {
                    "controller.zk.connect.uri": f"127.0.0.1:{self.zk_port}",
                    "controller.cluster.name": CLUSTER_NAME,
                    "controller.container.count": str(CONTAINERS),
                    "controller.service.rpc.listener.port": str(self.controller_port),
                    "controller.service.rpc.published.host.nameOrIp": "127.0.0.1",
                    "controller.service.rpc.published.port": str(self.controller_port),
                    "controller.service.rest.listener.host.ip": "127.0.0.1",
                    "controller.service.rest.listener.port": str(self.rest_port),
                    "controller.watermarking.frequency.seconds": str(self.watermark_interval_s),
                    "controller.metrics.statistics.enable": "false",
                }
            )
        )
        return self._java(
            "controller",
            "io.pravega.controller.server.Main",
            {"conf.file": str(config), "com.sun.xml.bind.v2.bytecode.ClassTailor.noOptimize": "true"},
            _CONTROLLER_LEFT_OUT,
        )

    # --- life cycle -------------------------------------------------------------------------------
    def _spawn(self, name: str, command: list[str], port: int) -> subprocess.Popen[bytes]:
        log = self.work_dir / f"{name}.log"
        process = spawn_group(command, log, cwd=self.work_dir)
        try:
            wait_listening("127.0.0.1", port, process, START_TIMEOUT_S, log, f"Pravega {name}")
        except BaseException:
            stop_group(process, 5.0)
            raise
        return process

    def start(self) -> None:
        """Start ZooKeeper and the bookie, then the segment store and the controller; wait until a
        scope can be created (which needs all of them)."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        (self.work_dir / "logback.xml").write_text(_LOGBACK)
        self.zk_port, self.bookie_port = free_port(), free_port()
        self.segment_store_port, self.controller_port, self.rest_port = free_port(), free_port(), free_port()
        try:
            self._bookie = self._spawn("bookie", self._bookie_command(), self.bookie_port)
            self._segment_store = spawn_group(
                self._segment_store_command(), self.work_dir / "segmentstore.log", cwd=self.work_dir
            )
            self._controller = self._spawn("controller", self._controller_command(), self.controller_port)
            # the budget counts from here: the two JVM starts above have their own
            self._wait_serving("the segment store", self._segment_store, time.monotonic())
        except BaseException:
            self.stop()
            raise

    def _wait_serving(self, what: str, process: subprocess.Popen[bytes], began: float) -> None:
        """Wait until a scope can be created and deleted (the controller keeps scopes in segment
        store tables), failing early if ``process`` exits."""
        wait_listening(
            "127.0.0.1", self.segment_store_port, process, START_TIMEOUT_S,
            self.work_dir / "segmentstore.log", "Pravega segment store",
        )  # fmt: skip
        admin = admin_for(self.controller_uri, StandaloneSecurity())
        last: Exception | None = None
        try:
            while time.monotonic() < began + START_TIMEOUT_S:
                if process.poll() is not None:
                    raise RuntimeError(f"{what} exited with {process.returncode}; see {self.work_dir}")
                try:
                    admin.create_scope("sparkflowready")
                    admin.delete_scope("sparkflowready")
                    self.segment_store_starts.append(time.monotonic() - began)
                    return
                except Exception as exc:  # containers still recovering
                    last = exc
                    time.sleep(0.5)
        finally:
            admin.close()
        raise TimeoutError(
            f"{what} did not serve within {START_TIMEOUT_S}s: {last}\n"
            f"segment store log: {_tail(self.work_dir / 'segmentstore.log')}\n"
            f"controller log: {_tail(self.work_dir / 'controller.log')}"
        )

    def kill_segment_store(self) -> None:
        """SIGKILL the segment store's process group (no clean shutdown, nothing flushed)."""
        process, self._segment_store = self._segment_store, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        stop_group(process, 5.0)  # reaps it and waits until the group is gone

    def start_segment_store(self) -> None:
        """Start the segment store again on the same port and storage; wait until it serves."""
        if self._segment_store is not None:
            raise RuntimeError("the segment store is running")
        began = time.monotonic()
        self._segment_store = spawn_group(
            self._segment_store_command(), self.work_dir / "segmentstore.log", cwd=self.work_dir
        )
        self._wait_serving("the restarted segment store", self._segment_store, began)

    def restart_segment_store(self) -> None:
        """Kill the segment store (SIGKILL) and start it again."""
        self.kill_segment_store()
        self.start_segment_store()

    def stop(self) -> None:
        """Stop every JVM (controller, segment store, then ZooKeeper and the bookie)."""
        for attr in ("_controller", "_segment_store", "_bookie"):
            process = getattr(self, attr)
            setattr(self, attr, None)
            if process is not None:
                stop_group(process, 10.0)


@contextlib.contextmanager
def pravega_split_cluster(work_dir: Path) -> Iterator[PravegaSplitCluster]:
    """A :class:`PravegaSplitCluster` for the ``with`` block, stopped (every process group) after it."""
    cluster = PravegaSplitCluster(work_dir)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
