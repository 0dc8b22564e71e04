"""A real Pravega standalone 0.13.0 as a child JVM, for tests and benchmarks.

``io.pravega:pravega-standalone`` (``io.pravega.local.LocalPravegaEmulator``) runs ZooKeeper, one
controller and one segment store in one JVM with in-memory storage. :class:`PravegaStandalone`
resolves it through :mod:`sparkflow_testing.maven`, configures it with ``singlenode.*`` system
properties on free loopback ports (REST server and admin gateway off), starts it in its own process
group and waits until ``createScope`` answers on the controller.

Classpath fixes, found by running it on Java 17 (no ``--add-opens`` is needed):

- the published pom leaves ``protobuf-java`` out of the runtime closure (the controller fails with
  ``NoClassDefFoundError: com/google/protobuf/GeneratedMessageV3``): pinned here at the version the
  controller API declares (3.21.7);
- it mixes Bouncy Castle 1.60 (``bcprov-jdk15on``), 1.70 (``bcprov-ext-jdk15on``) and ``bc-fips``;
  whichever comes first on the classpath wins, and a wrong pick fails every segment store request
  with ``NoSuchFieldError: id_alg_AEADChaCha20Poly1305``: 1.70 is pinned and ``bc-fips`` left out;
- two SLF4J bindings (logback and reload4j): reload4j is left out so the logback config applies.

Watermarks: the controller computes each stream's watermarks every
``controller.watermarking.frequency.seconds`` (10 by default); tests run it every second
(``watermark_interval_s``), so a noted time becomes a watermark within about a second.

Security (:class:`StandaloneSecurity`): TLS with a PEM certificate and key (and a JKS key store and
trust store, which the in-process controller uses), and password authentication with a password
file; see :mod:`sparkflow_testing.pravega.security` for making them.

Threading: none; everything is called from the test's thread.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from sparkflow_testing.jvm import TEST_JVM_FLAGS
from sparkflow_testing.maven import resolve_classpath
from sparkflow_testing.pravega.admin import admin_for
from sparkflow_testing.pravega.security import StandaloneSecurity
from sparkflow_testing.processes import free_port, spawn_group, stop_group, wait_listening

__all__ = ["PRAVEGA_ARTIFACTS", "PravegaStandalone", "standalone_classpath", "watched"]

PRAVEGA_ARTIFACTS = (
    "io.pravega:pravega-standalone:0.13.0",
    "com.google.protobuf:protobuf-java:3.21.7",
    "org.bouncycastle:bcprov-jdk15on:1.70",
    "org.bouncycastle:bcpkix-jdk15on:1.70",
)
"""The server and the pins that make its classpath consistent (see the module docstring)."""

MAIN_CLASS = "io.pravega.local.LocalPravegaEmulator"
_LEFT_OUT = ("slf4j-reload4j-", "bc-fips-")
START_TIMEOUT_S = 180.0
"""Cold start on a loaded two-core machine; it takes about 10 s when idle."""

_LOGBACK = """<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>{log}</file>
    <encoder><pattern>%d{{HH:mm:ss.SSS}} %-5level %logger{{36}} - %msg%n</pattern></encoder>
  </appender>
  <logger name="io.pravega.local" level="INFO"/>
  <root level="WARN"><appender-ref ref="FILE"/></root>
</configuration>
"""


_WATCHDOG = (
    'java_cmd() { "$@" & }; java_cmd "$@"; jvm=$!; trap \'kill $jvm; wait $jvm; exit 0\' TERM; '
    "while kill -0 {parent} 2>/dev/null && kill -0 $jvm 2>/dev/null; do sleep 2; done; "
    "kill $jvm 2>/dev/null; wait $jvm"
)


def watched(command: list[str], name: str = "pravega-standalone") -> list[str]:
    """``command`` under a shell named ``name`` that stops it when this process dies (even by SIGKILL)."""
    return ["sh", "-c", _WATCHDOG.replace("{parent}", str(os.getpid())), name, *command]


def standalone_classpath() -> list[Path]:
    """The jars of the standalone server, resolved once per machine, in a fixed order."""
    libs = resolve_classpath("pravega", list(PRAVEGA_ARTIFACTS))
    return sorted(p for p in libs.glob("*.jar") if not p.name.startswith(_LEFT_OUT))


class PravegaStandalone:
    """One standalone Pravega JVM in its own process group, on free loopback ports."""

    def __init__(
        self,
        work_dir: Path,
        security: StandaloneSecurity | None = None,
        heap: str = "1g",
        published_segment_store_port: int | None = None,
        watermark_interval_s: int = 1,
    ) -> None:
        self.work_dir = work_dir
        self.watermark_interval_s = watermark_interval_s
        self.published_segment_store_port = published_segment_store_port
        """The port the segment store tells clients (and its controller) to use, e.g. a proxy's;
        ``None``: its own listening port."""
        self.security = security or StandaloneSecurity()
        self.heap = heap
        self.log_path = work_dir / "standalone.log"
        self.controller_port = 0
        self.segment_store_port = 0
        self.zk_port = 0
        self.start_seconds = 0.0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def host(self) -> str:
        """The host clients connect to: ``localhost`` with TLS (rustls verifies no IP addresses)."""
        return "localhost" if self.security.tls else "127.0.0.1"

    @property
    def controller_uri(self) -> str:
        """``tcp://`` or ``tls://`` URI of the controller."""
        scheme = "tls" if self.security.tls else "tcp"
        return f"{scheme}://{self.host}:{self.controller_port}"

    def command(self) -> list[str]:
        """The JVM command line (ports must be chosen first)."""
        config = self.work_dir / "standalone-config.properties"
        config.touch()  # it must exist, even if empty
        logback = self.work_dir / "logback.xml"
        logback.write_text(_LOGBACK.format(log=self.log_path))
        props = {
            "singlenode.configurationFile": str(config),
            "singlenode.zk.port": str(self.zk_port),
            "singlenode.controller.rpc.port": str(self.controller_port),
            "singlenode.segmentStore.port": str(self.segment_store_port),
            "singlenode.controller.rest.enable": "false",
            "singlenode.admin.gateway.enable": "false",
            "singlenode.metrics.enable": "false",
            "pravegaservice.service.listener.host.nameOrIp": "127.0.0.1",
            "pravegaservice.service.published.host.nameOrIp": self.host,
            **(
                {"pravegaservice.service.published.port": str(self.published_segment_store_port)}
                if self.published_segment_store_port
                else {}
            ),
            "controller.watermarking.frequency.seconds": str(self.watermark_interval_s),
            "logback.configurationFile": str(logback),
            **self.security.properties(),
        }
        classpath = ":".join(str(p) for p in standalone_classpath())
        return [
            "java", f"-Xmx{self.heap}", *TEST_JVM_FLAGS,
            *(f"-D{k}={v}" for k, v in props.items()),
            "-cp", classpath, MAIN_CLASS,
        ]  # fmt: skip

    def start(self) -> None:
        """Start the JVM and wait until the controller creates a scope."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.zk_port = free_port()
        self.controller_port = free_port()
        self.segment_store_port = self.segment_store_port or free_port()  # a caller may choose it
        command = watched(self.command())
        began = time.monotonic()
        self._process = spawn_group(command, self.work_dir / "standalone.out", cwd=self.work_dir)
        try:
            wait_listening(
                "127.0.0.1", self.controller_port, self._process, START_TIMEOUT_S,
                self.work_dir / "standalone.out", "Pravega standalone",
            )  # fmt: skip
            self._wait_for_create_scope(began + START_TIMEOUT_S)
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - began

    def _wait_for_create_scope(self, deadline: float) -> None:
        admin = admin_for(self.controller_uri, self.security)
        try:
            last: Exception | None = None
            while time.monotonic() < deadline:
                if self._process is not None and self._process.poll() is not None:
                    raise RuntimeError(
                        f"Pravega standalone exited with {self._process.returncode}; see {self.log_path}"
                    )
                try:
                    admin.create_scope("sparkflowready")
                    admin.delete_scope("sparkflowready")
                    return
                except Exception as exc:  # not ready yet: controller or segment store still starting
                    last = exc
                    time.sleep(0.5)
            raise TimeoutError(f"Pravega standalone did not create a scope within {START_TIMEOUT_S}s: {last}")
        finally:
            admin.close()

    def stop(self) -> None:
        """Stop the JVM's process group."""
        process, self._process = self._process, None
        if process is not None:
            stop_group(process, 15.0)
