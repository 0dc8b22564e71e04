"""A Pravega cluster for tests and demos: a real standalone Pravega, or the project's emulator.

:func:`pravega_cluster` picks the backend: ``"standalone"`` runs the real Pravega 0.13.0 from its
Maven artifacts as a child JVM (:mod:`sparkflow_testing.pravega.standalone`), ``"emulator"`` the
project's emulator (:mod:`sparkflow_testing.pravega.emulator`) as a child process, ``"docker"`` a
``pravega/pravega`` container through Testcontainers. Without an explicit choice the environment
variable ``PRAVEGA_BACKEND`` decides, else the standalone where ``java`` and ``mvn`` exist, else the
emulator. Either way the caller gets a :class:`PravegaCluster` with the controller URI, helpers built
on the project's own clients (scopes, streams, a writer: every Python the project supports) and
:attr:`PravegaCluster.admin` (scale, truncate, inspect through the controller's own API, on every
backend). The official client (``pravega`` 0.3.8, wheels for CPython 3.11 only) is left to the tests
that use it as an oracle (:attr:`PravegaCluster.manager`, :func:`official_client_available`).

The emulator must run in its own process: the official client holds the GIL during blocking
calls, so a server thread in the client's process would deadlock. :class:`EmulatorProcess` starts
it in a session of its own (:func:`~sparkflow_testing.processes.popen_guarded`: the group dies
with the process that started it) and stops it by signalling its process group.

Threading: none; everything here is called from the test's thread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparkflow_testing.maven import java_and_maven_available
from sparkflow_testing.pravega.admin import PravegaAdmin, admin_for
from sparkflow_testing.pravega.emulator.control import EmulatorControl
from sparkflow_testing.pravega.standalone import PravegaStandalone
from sparkflow_testing.processes import popen_guarded, stop_group

__all__ = [
    "Backend",
    "PravegaCluster",
    "default_backend",
    "EmulatorProcess",
    "docker_available",
    "official_client_available",
    "pravega_cluster",
    "IsolatedCall",
    "run_isolated",
    "start_isolated",
    "start_emulator",
    "unique_name",
]

_LOG = logging.getLogger(__name__)
PRAVEGA_IMAGE = "pravega/pravega:0.13.0"
_START_TIMEOUT = 30.0


class Backend:
    """Names of the backends a :class:`PravegaCluster` can run on."""

    EMULATOR = "emulator"
    STANDALONE = "standalone"
    DOCKER = "docker"
    ALL = (EMULATOR, STANDALONE, DOCKER)


BACKEND_ENV = "PRAVEGA_BACKEND"


def default_backend() -> str:
    """``$PRAVEGA_BACKEND`` if set, else ``standalone`` where java and mvn exist, else ``emulator``."""
    chosen = os.environ.get(BACKEND_ENV, "").strip().lower()
    if chosen:
        if chosen not in Backend.ALL:
            raise ValueError(f"{BACKEND_ENV}={chosen!r}: expected one of {', '.join(Backend.ALL)}")
        return chosen
    return Backend.STANDALONE if java_and_maven_available() else Backend.EMULATOR


def unique_name(prefix: str) -> str:
    """A scope/stream/reader-group name unlikely to collide across tests and runs."""
    return f"{prefix}{uuid.uuid4().hex[:10]}"


@dataclass
class PravegaCluster:
    """A running Pravega (real or emulated) and helpers around the official client.

    The object is picklable (the client handle is created lazily per process), so tests may hand it
    to a child process that runs client code.
    """

    controller_uri: str
    backend: str
    control_url: str | None = None
    trust_store: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    _manager: Any = field(default=None, repr=False, compare=False)
    _admin: PravegaAdmin | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        return {
            "controller_uri": self.controller_uri,
            "backend": self.backend,
            "control_url": self.control_url,
            "trust_store": self.trust_store,
            "username": self.username,
            "password": self.password,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    @property
    def is_emulator(self) -> bool:
        """True when backed by the emulator (emulator-only tests skip otherwise)."""
        return self.backend == Backend.EMULATOR

    @property
    def control(self) -> EmulatorControl:
        """The emulator's control interface (scale, truncate, inspect); emulator backend only."""
        if self.control_url is None:
            raise RuntimeError(f"the {self.backend} backend has no emulator control interface")
        return EmulatorControl(self.control_url)

    @property
    def admin(self) -> PravegaAdmin:
        """Scale, truncate, inspect through the controller's gRPC API (every backend); made on first use."""
        if self._admin is None:
            self._admin = admin_for(
                self.controller_uri,
                trust_store=self.trust_store,
                username=self.username,
                password=self.password,
            )
        return self._admin

    @property
    def manager(self) -> Any:
        """The official client's ``pravega_client.StreamManager`` (an oracle, CPython 3.11 only)."""
        if self._manager is None:
            import pravega_client

            self._manager = pravega_client.StreamManager(self.controller_uri)
        return self._manager

    def settings(self) -> Any:
        """The project's ``ConnectionSettings`` for this cluster."""
        from connectors.pravega.controller_client import ConnectionSettings

        return ConnectionSettings(
            self.controller_uri,
            tls_enabled=self.controller_uri.startswith("tls://"),
            trust_store=self.trust_store,
            auth_enabled=self.username is not None,
            username=self.username,
            password=self.password,
        )

    def create_scope(self, scope: str | None = None) -> str:
        """Create a scope (a unique name when none is given) and return its name."""
        scope = scope or unique_name("scope")
        self.admin.create_scope(scope)
        return scope

    def create_stream(self, scope: str, name: str | None = None, segments: int = 1) -> str:
        """Create a stream with a fixed number of segments and return its name."""
        name = name or unique_name("stream")
        if not self.admin.create_stream(scope, name, segments):
            raise RuntimeError(f"stream {scope}/{name} already exists")
        return name

    def writer(self, scope: str, stream: str) -> Any:
        """The project's ``PravegaEventWriter`` for the stream (``write_many``, ``flush``, ``close``)."""
        from connectors.pravega.event_writer import PravegaEventWriter

        return PravegaEventWriter(self.settings(), scope, stream)

    def write(self, scope: str, stream: str, events: list[tuple[str | None, bytes]]) -> None:
        """Write ``(routing key, payload)`` events in order with the project's writer and flush."""
        writer = self.writer(scope, stream)
        try:
            writer.write_many([p for _k, p in events], [k for k, _p in events])
            writer.flush()
        finally:
            writer.abandon()

    def close(self) -> None:
        """Drop the client handles of this process."""
        self._manager = None
        if self._admin is not None:
            self._admin.close()
            self._admin = None


class EmulatorProcess:
    """The emulator as a child process in its own session."""

    def __init__(
        self, data_dir: Path | None = None, log_path: Path | None = None, tail_wait_ms: int = 500
    ) -> None:
        self.data_dir = data_dir
        self.log_path = log_path
        self.tail_wait_ms = tail_wait_ms
        self.ports: dict[str, Any] = {}
        self._process: subprocess.Popen[bytes] | None = None

    def start(
        self,
        controller_port: int = 0,
        segment_store_port: int = 0,
        control_port: int = 0,
        published_segment_store_port: int = 0,
    ) -> None:
        """Start the emulator (0 = free port) and wait for its ready line.

        ``published_segment_store_port``: the port the controller names for the segment store
        (a fault proxy's); 0 names the store's own.
        """
        command = [
            sys.executable, "-m", "sparkflow_testing.pravega.emulator",
            "--host", "127.0.0.1",
            "--controller-port", str(controller_port),
            "--segment-store-port", str(segment_store_port),
            "--control-port", str(control_port),
            "--published-segment-store-port", str(published_segment_store_port),
            "--tail-wait-ms", str(self.tail_wait_ms),
            "--parent-pid", str(os.getpid()),
        ]  # fmt: skip
        if self.data_dir is not None:
            command += ["--data-dir", str(self.data_dir)]
        stderr: Any = subprocess.DEVNULL
        if self.log_path is not None:
            stderr = open(self.log_path, "ab")  # handed to the child
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # where sparkflow_testing is importable from
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        self._process = popen_guarded(command, stdout=subprocess.PIPE, stderr=stderr, env=env)
        if stderr is not subprocess.DEVNULL:
            stderr.close()
        assert self._process.stdout is not None
        deadline = time.monotonic() + _START_TIMEOUT
        line = b""
        while time.monotonic() < deadline:
            line = self._process.stdout.readline()
            if line.strip().startswith(b"{"):
                break
            if self._process.poll() is not None:
                raise RuntimeError(
                    f"the emulator exited with {self._process.returncode}; see {self.log_path}"
                )
        else:
            self.stop()
            raise RuntimeError(f"the emulator did not start within {_START_TIMEOUT} s")
        self.ports = json.loads(line)
        EmulatorControl(self.ports["control_url"]).health()

    @property
    def cluster(self) -> PravegaCluster:
        """A :class:`PravegaCluster` pointing at this emulator."""
        return PravegaCluster(self.ports["controller_uri"], Backend.EMULATOR, self.ports["control_url"])

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM the emulator's process group (a clean stop), SIGKILL if it lingers."""
        process, self._process = self._process, None
        if process is None:
            return
        stop_group(process, timeout)
        if process.stdout is not None:
            process.stdout.close()

    def restart(self) -> None:
        """Stop and start again on the same ports (and data directory)."""
        ports = self.ports
        self.stop()
        self.start(ports["controller_port"], ports["segment_store_port"], ports["control_port"])


@contextlib.contextmanager
def start_emulator(data_dir: Path | None = None, log_path: Path | None = None) -> Iterator[EmulatorProcess]:
    """Run an emulator process for the duration of the ``with`` block."""
    process = EmulatorProcess(data_dir, log_path)
    process.start()
    try:
        yield process
    finally:
        process.stop()


def official_client_available() -> bool:
    """Whether the official client (``pravega`` 0.3.8: CPython 3.11 wheels only) is installed."""
    import importlib.util

    return importlib.util.find_spec("pravega_client") is not None


def docker_available(timeout: float = 3.0) -> bool:
    """True when a Docker engine answers a ping (not merely when a client library is installed)."""
    try:
        import docker
    except ImportError:
        return False
    try:
        client = docker.from_env(timeout=timeout)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception as exc:  # no socket, permission denied, daemon down, ...
        _LOG.info("no Docker engine: %s", exc)
        return False


def _testcontainers_available() -> bool:
    try:
        import testcontainers.core.container  # type: ignore[import-not-found]  # noqa: F401 - is it installed?
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def _docker_cluster() -> Iterator[PravegaCluster]:
    from testcontainers.core.container import DockerContainer  # type: ignore[import-not-found]
    from testcontainers.core.waiting_utils import wait_for_logs  # type: ignore[import-not-found]

    container = (
        DockerContainer(PRAVEGA_IMAGE)
        .with_command("standalone")
        .with_env("HOST_IP", "127.0.0.1")
        .with_bind_ports(9090, 9090)
        .with_bind_ports(12345, 12345)
    )
    with container:
        wait_for_logs(container, "Pravega Sandbox is running locally now", timeout=180)
        yield PravegaCluster("tcp://127.0.0.1:9090", Backend.DOCKER)


@contextlib.contextmanager
def _standalone_cluster(log_dir: Path) -> Iterator[PravegaCluster]:
    server = PravegaStandalone(log_dir / "standalone")
    server.start()
    _LOG.info("Pravega standalone ready in %.1f s at %s", server.start_seconds, server.controller_uri)
    try:
        yield PravegaCluster(server.controller_uri, Backend.STANDALONE)
    finally:
        server.stop()


@contextlib.contextmanager
def pravega_cluster(log_dir: Path | None = None, backend: str | None = None) -> Iterator[PravegaCluster]:
    """Yield a running cluster on ``backend`` (default: :func:`default_backend`)."""
    backend = backend or default_backend()
    if backend not in Backend.ALL:
        raise ValueError(f"backend {backend!r}: expected one of {', '.join(Backend.ALL)}")
    with contextlib.ExitStack() as stack:
        if log_dir is None:
            log_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"pravega-{backend}-")))
        if backend == Backend.DOCKER:
            if not (docker_available() and _testcontainers_available()):
                raise RuntimeError("the docker backend needs a Docker engine and testcontainers")
            yield stack.enter_context(_docker_cluster())
        elif backend == Backend.STANDALONE:
            yield stack.enter_context(_standalone_cluster(log_dir))
        else:
            process = stack.enter_context(start_emulator(log_path=log_dir / "emulator.log"))
            yield process.cluster


def _child(conn: Any, func: Any, args: tuple[Any, ...]) -> None:
    import traceback

    try:
        result = func(*args)
        conn.send(("ok", result))
    except BaseException as exc:  # report everything, including assertion failures
        conn.send(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))
    finally:
        conn.close()


class IsolatedCall:
    """A function running in a spawned child process; see :func:`start_isolated`."""

    def __init__(self, func: Any, args: tuple[Any, ...]) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self._name = getattr(func, "__name__", str(func))
        self._parent, child = context.Pipe(duplex=False)
        self._process = context.Process(target=_child, args=(child, func, args), daemon=True)
        self._process.start()
        child.close()

    def result(self, timeout: float) -> Any:
        """Wait up to ``timeout`` seconds; return the value, or raise as :func:`run_isolated` does."""
        try:
            if not self._parent.poll(timeout):
                raise TimeoutError(f"{self._name} did not finish within {timeout} s")
            status, value = self._parent.recv()
        except EOFError:
            self._process.join(5)
            raise AssertionError(f"{self._name} died with exit code {self._process.exitcode}") from None
        finally:
            self.kill()
        if status == "error":
            raise AssertionError(value)
        return value

    def kill(self) -> None:
        """Kill the child if it still runs."""
        if self._process.is_alive():
            self._process.kill()
        self._process.join(5)
        self._parent.close()


def start_isolated(func: Any, *args: Any) -> IsolatedCall:
    """Start ``func(*args)`` in a fresh (spawned) process; collect it with ``.result(timeout)``."""
    return IsolatedCall(func, args)


def run_isolated(func: Any, *args: Any, timeout: float = 60.0) -> Any:
    """Run ``func(*args)`` in a fresh (spawned) process and return its result.

    The official client panics or hangs on unexpected replies, and it holds the GIL while blocked,
    so in-process timeouts cannot interrupt it. Running client code in a child bounds every test:
    after ``timeout`` seconds the child is killed and :class:`TimeoutError` is raised here. An
    exception in the child is re-raised as :class:`AssertionError` with the child's traceback.
    ``func`` must be importable (a module-level function) and ``args`` picklable.
    """
    return start_isolated(func, *args).result(timeout)
