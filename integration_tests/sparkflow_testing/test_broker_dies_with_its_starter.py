"""A broker JVM dies with the Python process that started it, even one killed by SIGKILL.

Brokers left running by a killed pytest run (adopted by init, holding their ports, memory and CPU)
spoiled later benchmarks on a two-core machine. Here a child Python process starts Apache Kafka as
a fixture would, from a thread of a pool (``PR_SET_PDEATHSIG`` would have fired when that thread
ended), and is killed with SIGKILL: no ``stop()``, no ``finally``, no ``atexit``. The broker's JVM
must be gone within seconds, and its port closed (:mod:`connector_base.testing.orphan_guard`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

GONE_WITHIN_S = 5.0

STARTER = r"""
import json, os, time
from concurrent.futures import ThreadPoolExecutor
from sparkflow_testing.kafka.apache_kafka import start_apache_kafka
from sparkflow_testing.processes import group_members
with ThreadPoolExecutor(1) as pool:
    broker = pool.submit(start_apache_kafka).result()
group = broker.process_group
print(json.dumps({"group": group_members(group), "jvm": group, "bootstrap": broker.bootstrap}), flush=True)
time.sleep(600)
"""


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _accepts(bootstrap: str) -> bool:
    host, port = bootstrap.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=0.5):
            return True
    except OSError:
        return False


def test_apache_kafka_dies_when_its_starter_is_killed() -> None:
    starter = subprocess.Popen([sys.executable, "-c", STARTER], stdout=subprocess.PIPE)
    assert starter.stdout is not None
    members: list[psutil.Process] = []
    try:
        line = starter.stdout.readline()
        assert line, f"the starter exited with {starter.wait(30)} before the broker ran"
        started = json.loads(line)
        members = [psutil.Process(pid) for pid in started["group"]]
        jvm = psutil.Process(started["jvm"])
        assert "kafka.Kafka" in jvm.cmdline() and jvm.ppid() == starter.pid
        assert _accepts(started["bootstrap"])

        os.kill(starter.pid, signal.SIGKILL)
        starter.wait(10)
        deadline = time.monotonic() + GONE_WITHIN_S
        while (any(_alive(p) for p in members) or _accepts(started["bootstrap"])) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.05)
        survivors = [f"{p.pid} {' '.join(p.cmdline())[:120]}" for p in members if _alive(p)]
        assert not survivors, f"alive {GONE_WITHIN_S}s after their starter was killed: {survivors}"
        assert not _accepts(started["bootstrap"]), "the broker's port still accepts connections"
    finally:
        starter.kill()
        starter.wait(10)
        for proc in members:  # only if the test failed: leave no JVM behind
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
