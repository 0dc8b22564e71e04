"""A Spark standalone cluster for tests, started from the installed pyspark wheel.

``SparkStandaloneCluster.start(workers=2)`` runs a master and ``workers`` workers, each a JVM in its
own process group (:mod:`sparkflow_testing.processes`), on the jars the wheel ships
(``pyspark/jars``); the wheel has no ``start-master.sh``, so the JVMs are started directly with
``SPARK_HOME`` pointing at the wheel (workers build executor command lines from it). Each worker offers
one core and little memory, so an application gets one executor JVM per worker, each with its own
Python workers. Every JVM binds its ports itself (port 0) and the master's log says which it got:
a port picked here and bound later could be taken in between by another lane's server (a CI run
once got a page that was not the master's JSON status, most likely another server's).
``session_conf()`` gives the settings a driver needs to run on it.

Failure helpers: ``executor_pids()`` lists the executor JVMs (children of the worker JVMs),
``kill_executor(pid)`` kills one (its worker starts a new one for the application), and
``stop_worker(i)`` kills a worker with its executors for good. ``executor_pid_of(pid)`` walks up from
a Python worker process to the executor JVM that runs it.

Threading: none.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import Popen

from connector_base.spark.parallelism import PARALLELISM_ENV
from sparkflow_testing.jvm import TEST_JVM_FLAGS
from sparkflow_testing.maven import java_command
from sparkflow_testing.processes import (
    KILL_WAIT_S,
    exit_report,
    spawn_group,
    stop_group,
    wait_group_gone,
)

__all__ = ["SparkStandaloneCluster", "executor_pid_of", "pyspark_home"]

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
START_TIMEOUT_S = 90.0
WORKER_CORES = 1
WORKER_MEMORY = "1g"
EXECUTOR_MEMORY = "512m"
DAEMON_HEAP = "256m"
_JAVA_17_OPENS = (
    "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
    "java.util.concurrent", "java.util.concurrent.atomic", "jdk.internal.ref", "sun.nio.ch", "sun.nio.cs",
    "sun.security.action", "sun.util.calendar",
)  # fmt: skip
"""Packages Spark's launcher opens on Java 17 (``spark-class`` adds them; a bare ``java`` must too)."""


_MASTER_URL = re.compile(r"Starting Spark master at (spark://\S+)")
_MASTER_UI_PORT = re.compile(r"Successfully started service 'MasterUI' on port (\d+)")


def pyspark_home() -> Path:
    """The installed pyspark package directory (``SPARK_HOME`` of the wheel)."""
    import pyspark

    return Path(pyspark.__file__).parent


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])  # the command name may hold spaces and parentheses


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _ppid(int(entry.name)) == pid:
            found.append(int(entry.name))
    return found


def executor_pid_of(pid: int) -> int | None:
    """The executor JVM that ``pid`` (a Python worker, or the executor itself) runs under, if any."""
    current: int | None = pid
    while current and current > 1:
        if EXECUTOR_CLASS in _cmdline(current):
            return current
        current = _ppid(current)
    return None


@dataclass
class SparkStandaloneCluster:
    """A running master and workers; ``stop()`` kills every JVM, executors included."""

    master_url: str
    master_ui: str
    workdir: Path
    _master: Popen[bytes]
    _workers: list[Popen[bytes]] = field(default_factory=list)
    _owned_dir: tempfile.TemporaryDirectory[str] | None = None

    @classmethod
    def start(cls, workers: int = 2, workdir: Path | None = None) -> SparkStandaloneCluster:
        """Start a master and ``workers`` workers (one core each) and wait until all registered."""
        owned = None
        if workdir is None:
            owned = tempfile.TemporaryDirectory(prefix="spark-cluster-")
            workdir = Path(owned.name)
        log = workdir / "master.log"
        seen = log.stat().st_size if log.exists() else 0
        master = spawn_group(
            _spark_jvm(MASTER_CLASS, ["--host", "127.0.0.1", "--port", "0", "--webui-port", "0"]), log
        )
        try:
            lines = _wait_log_lines(log, seen, (_MASTER_URL, _MASTER_UI_PORT), master, "spark master")
        except BaseException:
            stop_group(master)
            raise
        master_url, ui_port = lines[0].group(1), lines[1].group(1)
        cluster = cls(master_url, f"http://127.0.0.1:{ui_port}", workdir, master, [], owned)
        try:
            for _ in range(workers):
                cluster._start_worker()
            cluster.wait_workers(workers)
        except BaseException:
            cluster.stop()
            raise
        return cluster

    def _start_worker(self, index: int | None = None) -> None:
        """Start a new worker, or worker ``index`` again."""
        slot = len(self._workers) if index is None else index
        work = self.workdir / f"worker-{slot}"
        work.mkdir(parents=True, exist_ok=True)
        args = [
            "--host", "127.0.0.1",
            "--cores", str(WORKER_CORES),
            "--memory", WORKER_MEMORY,
            "--work-dir", str(work),
            "--webui-port", "0",
            self.master_url,
        ]  # fmt: skip
        proc = spawn_group(_spark_jvm(WORKER_CLASS, args), self.workdir / f"worker-{slot}.log")
        if index is None:
            self._workers.append(proc)
        else:
            self._workers[index] = proc

    # --- state --------------------------------------------------------------------------------
    def master_state(self) -> dict[str, object]:
        """The master's JSON status (workers, applications)."""
        with urllib.request.urlopen(f"{self.master_ui}/json/", timeout=5) as response:
            state: dict[str, object] = json.load(response)
            return state

    def alive_workers(self) -> int:
        """Workers the master sees as ALIVE."""
        workers = self.master_state().get("workers", [])
        assert isinstance(workers, list)
        return sum(1 for w in workers if w.get("state") == "ALIVE")

    def wait_workers(self, count: int, timeout_s: float = START_TIMEOUT_S) -> None:
        """Wait until ``count`` workers are registered and alive."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for i, proc in enumerate(self._workers):
                if proc.poll() is not None:
                    raise RuntimeError(f"spark worker {i} exited: {self._tail(f'worker-{i}.log')}")
            try:
                if self.alive_workers() >= count:
                    return
            except (OSError, ValueError):  # not serving yet, or its JSON page not ready
                pass
            time.sleep(0.3)
        raise TimeoutError(f"{count} spark workers did not register within {timeout_s}s")

    def _tail(self, name: str) -> str:
        path = self.workdir / name
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    @property
    def total_cores(self) -> int:
        """Executor cores the cluster offers while every worker is up."""
        return WORKER_CORES * len(self._workers)

    @property
    def planning_parallelism(self) -> int:
        """What ``driver_env`` tells the connectors to plan for: two tasks per executor core."""
        return 2 * self.total_cores

    def driver_env(self) -> dict[str, str]:
        """Environment of the driver process, set before its session starts.

        The driver JVM passes its environment to the Python workers that plan data sources, which
        see nothing of the session: so ``PYSPARK_PYTHON`` and the plan's parallelism travel this way.
        """
        return {"PYSPARK_PYTHON": sys.executable, PARALLELISM_ENV: str(self.planning_parallelism)}

    def session_conf(self) -> dict[str, str]:
        """Driver settings for an application on this cluster: one 1-core executor per worker."""
        return {
            "spark.master": self.master_url,
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.executor.cores": str(WORKER_CORES),
            "spark.executor.memory": EXECUTOR_MEMORY,
            "spark.executor.extraJavaOptions": " ".join(TEST_JVM_FLAGS),
            "spark.cores.max": str(self.total_cores),
            "spark.executorEnv.PYSPARK_PYTHON": sys.executable,
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": str(self.total_cores),
            "spark.python.worker.reuse": "true",
        }

    # --- failures -----------------------------------------------------------------------------
    def worker_pids(self) -> list[int]:
        """The worker JVMs still running (index order; a stopped worker is left out)."""
        return [p.pid for p in self._workers if p.poll() is None]

    def executor_pids(self) -> list[int]:
        """The executor JVMs running now (children of the worker JVMs)."""
        return [c for w in self.worker_pids() for c in _children(w) if EXECUTOR_CLASS in _cmdline(c)]

    def wait_executors(self, count: int, timeout_s: float = START_TIMEOUT_S) -> list[int]:
        """Wait until ``count`` executor JVMs run; returns their pids."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            pids = self.executor_pids()
            if len(pids) >= count:
                return pids
            time.sleep(0.2)
        raise TimeoutError(f"{count} executors did not start within {timeout_s}s")

    def kill_executor(self, pid: int) -> None:
        """SIGKILL one executor JVM (and its Python workers, which exit when their JVM goes)."""
        if pid not in self.executor_pids():
            raise ValueError(f"pid {pid} is not an executor of this cluster")
        os.kill(pid, signal.SIGKILL)

    def worker_of(self, executor_pid: int) -> int:
        """The index of the worker that runs ``executor_pid``."""
        parent = _ppid(executor_pid)
        for i, proc in enumerate(self._workers):
            if proc.pid == parent:
                return i
        raise ValueError(f"pid {executor_pid} is not an executor of this cluster")

    def stop_worker(self, index: int) -> None:
        """Kill worker ``index`` with its executors, for good (SIGKILL to its process group)."""
        proc = self._workers[index]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        if not wait_group_gone(proc.pid, KILL_WAIT_S):  # its executors die with it, before a restart
            raise RuntimeError(f"worker {index}'s process group {proc.pid} survived SIGKILL")

    def restart_worker(self, index: int) -> None:
        """Start worker ``index`` again after ``stop_worker`` (a new worker to the master); wait for it."""
        if self._workers[index].poll() is None:
            raise RuntimeError(f"worker {index} is running")
        self._start_worker(index)
        self.wait_workers(len(self._workers))

    def stop(self) -> None:
        """Stop every worker (with its executors) and the master."""
        for proc in self._workers:
            stop_group(proc)
        stop_group(self._master)
        if self._owned_dir is not None:
            self._owned_dir.cleanup()

    def __enter__(self) -> SparkStandaloneCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _wait_log_lines(
    log: Path, offset: int, patterns: tuple[re.Pattern[str], ...], proc: Popen[bytes], what: str
) -> list[re.Match[str]]:
    """The first match of each of ``patterns`` in ``log`` after byte ``offset``, waiting for them.

    The master binds its ports itself (port 0), so no port chosen here can be taken by another process
    before it binds; its log says which ports it got.
    """
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        text = log.read_bytes()[offset:].decode(errors="replace") if log.exists() else ""
        found = [pattern.search(text) for pattern in patterns]
        if all(found):
            return [match for match in found if match is not None]
        if proc.poll() is not None:
            raise RuntimeError(exit_report(what, proc.returncode, text))
        if time.monotonic() > deadline:
            missing = [p.pattern for p, m in zip(patterns, found, strict=True) if m is None]
            raise TimeoutError(f"{what} did not log {missing} within {START_TIMEOUT_S}s: {text[-2000:]}")
        time.sleep(0.2)


def _spark_jvm(main_class: str, args: list[str]) -> list[str]:
    """A master or worker JVM on the wheel's jars, with ``SPARK_HOME`` set for the executors it starts."""
    home = pyspark_home()
    env = [
        "env",
        f"SPARK_HOME={home}",
        "SPARK_LOCAL_IP=127.0.0.1",
        f"PYSPARK_PYTHON={sys.executable}",
        "SPARK_SCALA_VERSION=2.13",  # the executor launcher needs it outside a Spark build or distribution
    ]
    cmd = java_command(
        home / "jars",
        main_class,
        args,
        heap=DAEMON_HEAP,
        jvm_args=[
            *TEST_JVM_FLAGS,
            "-XX:+IgnoreUnrecognizedVMOptions",
            *(f"--add-opens=java.base/{package}=ALL-UNNAMED" for package in _JAVA_17_OPENS),
            "-Dio.netty.tryReflectionSetAccessible=true",
            "-Dspark.ui.killEnabled=false",
            "-Dspark.master.rest.enabled=false",  # its REST server would take the fixed port 6066
        ],
    )
    return env + cmd
