"""CPU seconds each kind of process spends on a query: Spark's JVM, its Python workers, the broker.

A benchmark's wall time on a small machine is the sum of what every process on its cores did:
Spark's JVM, the Python workers a Python data source runs in, and, when the broker runs on the same
machine, the broker's JVM serving the fetches. ``ProcessCpu`` snapshots the CPU time of each such
process before and after a query and returns the difference by role, so a benchmark can say where a
gap between two readers went. It reads ``/proc/<pid>/stat`` directly (Linux, where the benchmarks
run): one field per process, which needs no dependency.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ROLES", "ProcessCpu", "role_of"]

ROLES = ("spark-jvm", "python-workers", "broker", "driver")
_TICK = os.sysconf("SC_CLK_TCK")


def role_of(pid: int, cmdline: str, own_pid: int) -> str | None:
    """The role of a process from its command line (``None``: not one the benchmarks count)."""
    if pid == own_pid:
        return "driver"
    java = "java" in cmdline.split(" ", 1)[0]
    if java and "org.apache.spark.deploy.SparkSubmit" in cmdline:
        return "spark-jvm"
    if java and "kafka.Kafka " in cmdline:
        return "broker"
    if not java and "pyspark" in cmdline:
        return "python-workers"
    return None


def _cpu_seconds() -> dict[tuple[str, int], float]:
    """CPU seconds (user and system) of this process and its descendants, by ``(role, pid)``.

    Only descendants: a Spark session or broker of another program on the machine is not counted.
    """
    own = os.getpid()
    seen: dict[int, tuple[int, str, float]] = {}  # pid -> (parent, command line, CPU seconds)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:  # the process ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        seen[int(entry.name)] = (int(fields[1]), cmdline, (int(fields[11]) + int(fields[12])) / _TICK)

    def descends(pid: int) -> bool:
        for _ in range(64):  # a bound in case of a cycle while processes come and go
            if pid == own:
                return True
            if pid not in seen or pid <= 1:
                return False
            pid = seen[pid][0]
        return False

    out: dict[tuple[str, int], float] = {}
    for pid, (_parent, cmdline, seconds) in seen.items():
        role = role_of(pid, cmdline, own)
        if role is not None and descends(pid):
            out[(role, pid)] = seconds
    return out


class ProcessCpu:
    """``start()`` before a query, ``stop()`` after it: CPU seconds by role in between.

    A process that started during the query counts from zero; one that ended during it is lost
    (Spark keeps its JVM and reuses its Python workers, so the warm rounds lose nothing).
    """

    def __init__(self) -> None:
        self._before: dict[tuple[str, int], float] = {}

    def start(self) -> None:
        self._before = _cpu_seconds()

    def stop(self) -> dict[str, float]:
        spent = dict.fromkeys(ROLES, 0.0)
        for (role, pid), seconds in _cpu_seconds().items():
            spent[role] += seconds - self._before.get((role, pid), 0.0)
        return spent
