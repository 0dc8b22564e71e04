"""Where a query's time went inside Spark: CPU per process kind, task durations, scan metrics, py-spy.

Used by the read benchmarks' ``--profile`` option. Three views of one query, all from the running
session (no UI needed):

- ``ProcessCpu``: CPU seconds of the Spark JVM (every thread), of its Python workers (every
  Python process under the JVM) and of a broker
  the benchmark started, from ``/proc``;
- ``last_query_report``: the last SQL execution's duration and the part before its first job
  (planning, with the source's ``partitions()``), its tasks (count, wall time, JVM run/CPU time,
  deserialisation, GC, result serialisation, from Spark's status store) and the scan's row count;
- ``PySpyRecorder``: ``py-spy record --subprocesses`` attached to the JVM (so every Python worker
  under it is sampled, and nothing else), raw stacks to a file that ``benchmarks.profile_summary``
  sums by category.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from sparkflow_testing.processes import popen_guarded

__all__ = ["ProcessCpu", "PySpyRecorder", "jvm_pid", "last_query_report"]

_TICKS = os.sysconf("SC_CLK_TCK")


def jvm_pid(spark: Any) -> int:
    """The process id of the session's JVM."""
    return int(spark._jvm.java.lang.ProcessHandle.current().pid())


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def _cpu_seconds(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(b")") + 2 :].split()
    # fields[11], fields[12]: utime, stime (man 5 proc, counted from field 3)
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _descendants(tree: dict[int, list[int]], root: int) -> list[int]:
    out, stack = [], list(tree.get(root, []))
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(tree.get(pid, []))
    return out


@dataclass(frozen=True, slots=True)
class CpuSample:
    """CPU seconds so far of the JVM, of the Python processes under it, and of the broker."""

    jvm: float
    python_workers: float
    broker: float
    profiler: float


class ProcessCpu:
    """CPU seconds of the Spark JVM, every Python worker under it and the broker (``/proc``).

    The broker is this process's descendants whose command line holds ``broker_match`` (a server
    the benchmark started, sharing the machine's cores with Spark); py-spy's own CPU is counted
    apart. A process that has exited
    keeps the CPU it had at the last sample (a worker that starts and ends between two samples
    is missed: Spark's workers are reused).
    """

    def __init__(self, spark: Any, broker_match: bytes | None = None) -> None:
        self.pid = jvm_pid(spark)
        self.broker_match = broker_match
        self._workers: dict[int, float] = {}
        self._brokers: dict[int, float] = {}
        self._profilers: dict[int, float] = {}

    def sample(self) -> CpuSample:
        """CPU used so far by each kind of process."""
        tree = _children()
        for pid in _descendants(tree, self.pid):
            self._workers[pid] = _cpu_seconds(pid) or self._workers.get(pid, 0.0)
        for pid in _descendants(tree, os.getpid()):
            if pid == self.pid or pid in self._workers:
                continue
            cmdline = _cmdline(pid)
            if b"py-spy" in cmdline:
                self._profilers[pid] = _cpu_seconds(pid) or self._profilers.get(pid, 0.0)
            elif self.broker_match and self.broker_match in cmdline:
                self._brokers[pid] = _cpu_seconds(pid) or self._brokers.get(pid, 0.0)
        jvm = _cpu_seconds(self.pid) or 0.0
        return CpuSample(
            jvm,
            sum(self._workers.values()),
            sum(self._brokers.values()),
            sum(self._profilers.values()),
        )


def _scala(spark: Any, value: Any) -> Any:
    return spark._jvm.scala.jdk.javaapi.CollectionConverters.asJava(value)


def last_query_report(spark: Any) -> dict[str, Any]:
    """Tasks and scan metrics of the session's last SQL execution (a collected query)."""
    store = spark._jsparkSession.sharedState().statusStore()
    for _ in range(50):  # the listener records the end a moment after collect() returns
        executions = _scala(spark, store.executionsList())
        last = executions.get(executions.size() - 1)
        if last.completionTime().isDefined():
            break
        time.sleep(0.05)
    values = _scala(spark, store.executionMetrics(last.executionId()))
    scan: dict[str, str] = {}
    for node in _scala(spark, store.planGraph(last.executionId()).allNodes()):
        if node.name().startswith("BatchScan"):
            for metric in _scala(spark, node.metrics()):
                value = values.get(metric.accumulatorId())
                # the Python workers' byte counts add up over the session: only rows are per query
                if value is not None and "rows" in metric.name():
                    scan[metric.name()] = str(value).split("\n")[-1]
    status = spark.sparkContext._jsc.sc().statusStore()
    stages = []
    job_ids = list(_scala(spark, last.jobs()).keySet())
    jobs = [status.job(j) for j in job_ids]
    started = last.submissionTime()
    first_job = min(
        (j.submissionTime().get().getTime() for j in jobs if j.submissionTime().isDefined()), default=started
    )
    ended = last.completionTime().get().getTime() if last.completionTime().isDefined() else started
    timeline = {"query_ms": ended - started, "before_first_job_ms": first_job - started}
    for job_id in job_ids:
        for stage_id in _scala(spark, status.job(job_id).stageIds()):
            tasks = [t for t in _scala(spark, status.taskList(stage_id, 0, 1_000_000))]
            if not tasks:
                continue  # skipped by adaptive execution
            metrics = [t.taskMetrics().get() for t in tasks if t.taskMetrics().isDefined()]
            durations = sorted(t.duration().get() for t in tasks if t.duration().isDefined())
            stages.append(
                {
                    "stage": int(stage_id),
                    "tasks": len(tasks),
                    "task_ms": durations,
                    "run_ms": sum(m.executorRunTime() for m in metrics),
                    "jvm_cpu_ms": sum(m.executorCpuTime() for m in metrics) // 1_000_000,
                    "deserialize_ms": sum(m.executorDeserializeTime() for m in metrics),
                    "gc_ms": sum(m.jvmGcTime() for m in metrics),
                    "result_serialize_ms": sum(m.resultSerializationTime() for m in metrics),
                }
            )
    return {"scan": scan, "stages": sorted(stages, key=lambda s: s["stage"]), **timeline}


def format_report(name: str, seconds: float, cpu: tuple[CpuSample, CpuSample], report: dict[str, Any]) -> str:
    """One query's figures, a few lines of text."""
    before, after = cpu
    broker = f", broker {after.broker - before.broker:.2f} s" if after.broker else ""
    if after.profiler:
        broker += f", py-spy {after.profiler - before.profiler:.2f} s"
    lines = [
        f"{name}: {seconds:.2f} s wall (SQL execution {report['query_ms']} ms, of which "
        f"{report['before_first_job_ms']} ms before its first job: planning); CPU: JVM "
        f"{after.jvm - before.jvm:.2f} s, Python workers {after.python_workers - before.python_workers:.2f} s"
        f"{broker} (load average {os.getloadavg()[0]:.1f})"
    ]
    for s in report["stages"]:
        lines.append(
            f"  stage {s['stage']}: {s['tasks']} tasks, task ms {s['task_ms']}, run {s['run_ms']} ms, "
            f"JVM CPU {s['jvm_cpu_ms']} ms, deserialize {s['deserialize_ms']} ms, GC {s['gc_ms']} ms, "
            f"result serialize {s['result_serialize_ms']} ms"
        )
    if report["scan"]:
        lines.append("  scan: " + "; ".join(f"{k} {v}" for k, v in report["scan"].items()))
    return "\n".join(lines)


class PySpyRecorder:
    """``py-spy record --subprocesses`` on the JVM's Python workers, raw stacks to ``path``.

    Python frames only (no ``--native``), idle threads left out; ``stop()`` ends the recording
    (SIGINT, which makes py-spy write its file).
    """

    def __init__(self, spark: Any, path: str, rate: int = 100) -> None:
        exe = shutil.which("py-spy") or os.path.join(os.path.dirname(sys.executable), "py-spy")
        if not os.path.exists(exe):
            raise SystemExit("--profile needs py-spy (pip install the project's bench extra)")
        self.path = path
        self._proc = popen_guarded(  # a benchmark killed mid-run leaves no py-spy recording behind
            [
                exe,
                "record",
                "--pid",
                str(jvm_pid(spark)),
                "--subprocesses",
                "--format",
                "raw",
                "--rate",
                str(rate),
                "--output",
                path,
                "--nonblocking",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(1.0)  # py-spy finds the processes
        if self._proc.poll() is not None:
            raise SystemExit(
                f"py-spy failed: {self._proc.stderr.read().decode() if self._proc.stderr else ''}"
            )

    def stop(self) -> None:
        """End the recording and wait for the file."""
        self._proc.send_signal(signal.SIGINT)
        try:
            self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
