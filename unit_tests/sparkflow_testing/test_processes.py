"""``sparkflow_testing.processes``: a stop waits for the whole process group; a start checks who listens.

The launchers here are small Python programs in their own session, shaped like the real ones:
``noida-db``'s launcher starts the real binary as a child, which takes a while to stop after the
launcher is gone (the restart race of issue 21).
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
from pathlib import Path

import psutil
import pytest

from connector_base.testing.orphan_guard import GUARD_FLAG
from sparkflow_testing.processes import (
    exit_report,
    free_port,
    group_members,
    listening_pids,
    popen_guarded,
    spawn_group,
    stop_group,
    wait_listening,
)

# A launcher that starts a child and exits at once on SIGTERM; the child writes its pid, then takes
# ``linger`` seconds to stop after SIGTERM (like a server flushing its data), or ignores SIGTERM.
LAUNCHER = r"""
import os, signal, subprocess, sys, time
pid_file, linger, ignore = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "ignore"
child = r'''
import os, signal, sys, time
linger, ignore = float(sys.argv[1]), sys.argv[2] == "ignore"
def on_term(*_):
    if ignore:
        return
    time.sleep(linger)
    os._exit(0)
signal.signal(signal.SIGTERM, on_term)
open(sys.argv[3], "w").write(str(os.getpid()))
while True:
    time.sleep(0.1)
'''
subprocess.Popen([sys.executable, "-c", child, str(linger), sys.argv[3], pid_file])
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
while True:
    time.sleep(0.1)
"""

LISTENER = r"""
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
while True:
    time.sleep(0.1)
"""


def _launch(tmp_path: Path, linger: float, mode: str = "stop") -> tuple[subprocess.Popen[bytes], int]:
    pid_file = tmp_path / f"child-{time.monotonic_ns()}.pid"
    proc = spawn_group([sys.executable, "-c", LAUNCHER, str(pid_file), str(linger), mode], tmp_path / "log")
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline and proc.poll() is None, "the launcher did not start its child"
        time.sleep(0.05)
    return proc, int(pid_file.read_text())


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _guards(pgid: int) -> set[int]:
    """The orphan guards (``orphan_guard.py --guard``) in process group ``pgid``."""
    return {pid for pid in group_members(pgid) if GUARD_FLAG in psutil.Process(pid).cmdline()}


def test_stop_waits_for_the_launchers_child_not_only_for_the_launcher(tmp_path: Path) -> None:
    proc, child = _launch(tmp_path, linger=1.5)
    guards = _guards(proc.pid)
    assert len(guards) == 1
    assert set(group_members(proc.pid)) == {proc.pid, child} | guards
    stop_group(proc)
    # the launcher exits at once; the child needs 1.5 s: a stop that waited for the launcher only
    # returned while the child still ran (the old ``stop_group``)
    assert proc.poll() is not None
    assert not _alive(child)
    assert group_members(proc.pid) == []


def test_stop_kills_a_group_that_ignores_sigterm(tmp_path: Path) -> None:
    proc, child = _launch(tmp_path, linger=0, mode="ignore")
    started = time.monotonic()
    stop_group(proc, timeout_s=0.5)
    assert not _alive(child)
    assert group_members(proc.pid) == []
    assert time.monotonic() - started >= 0.5  # SIGTERM was given its chance first


def test_stop_of_a_group_whose_launcher_already_exited_still_stops_the_child(tmp_path: Path) -> None:
    proc, child = _launch(tmp_path, linger=0.5)
    os.kill(proc.pid, 9)  # the launcher dies alone: the child lives on in its group
    proc.wait(10)
    assert _alive(child)
    stop_group(proc)
    assert not _alive(child)


def test_wait_listening_accepts_the_group_it_started(tmp_path: Path) -> None:
    port = free_port()
    proc = spawn_group([sys.executable, "-c", LISTENER, str(port)], tmp_path / "log")
    try:
        wait_listening("127.0.0.1", port, proc, 30, tmp_path / "log", "listener")
        owners = listening_pids(port)
        assert owners is not None and owners <= {proc.pid}
    finally:
        stop_group(proc)


def test_wait_listening_rejects_a_port_held_by_an_earlier_instance(tmp_path: Path) -> None:
    port = free_port()
    old = spawn_group([sys.executable, "-c", LISTENER, str(port)], tmp_path / "old.log")
    new = spawn_group([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "new.log")
    try:
        wait_listening("127.0.0.1", port, old, 30, tmp_path / "old.log", "old listener")
        held = rf"held by pid \[{old.pid}\], not by the process group {new.pid}"
        with pytest.raises(TimeoutError, match=held):
            wait_listening("127.0.0.1", port, new, 1.0, tmp_path / "new.log", "new server")
    finally:
        stop_group(new)
        stop_group(old)
    with socket.socket() as s:  # the port is free again: the old group is gone, not just signalled
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))


def test_wait_listening_fails_when_what_it_started_exits(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "log"
    proc = spawn_group([sys.executable, "-c", "print('already running'); raise SystemExit(3)"], log)
    with pytest.raises(RuntimeError, match="exited with 3: no error line in its log .* already running"):
        wait_listening("127.0.0.1", port, proc, 30, log, "server")


def test_an_exit_report_puts_the_last_error_lines_before_the_log_tail() -> None:
    log = "SLF4J: no binding\n" * 50 + (
        "[main] INFO starting\n"
        "[main] ERROR kafka.Kafka$ - Exiting Kafka due to fatal exception during startup.\n"
        "org.apache.kafka.common.KafkaException: Socket server failed to bind to 127.0.0.1:20001\n"
        "\tat kafka.network.Acceptor.openServerSocket(SocketServer.scala:700)\n"
    )
    report = exit_report("apache-kafka", 1, log)
    first = report.split(" | ")[0]
    assert first.startswith(
        "apache-kafka exited with 1: [main] ERROR kafka.Kafka$ - Exiting Kafka due to fatal exception"
    )
    assert "failed to bind to 127.0.0.1:20001" in first
    assert "disk free " in first and "memory available " in first
    assert report.endswith(log[-2000:])


def test_a_second_stop_never_signals_a_group_that_took_over_the_recycled_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pids wrap (pid_max 32768 here): once a stopped launcher's group is empty its id can come back
    # as a newcomer's pid and session. A second stop (kill() then the fixture's stop(), say) killed
    # that newcomer before: a session's kinesalite died mid-run in a fresh-clone run.
    from sparkflow_testing import processes

    proc, child = _launch(tmp_path, linger=0)
    stop_group(proc)
    assert not _alive(child)
    signalled: list[tuple[int, int]] = []
    monkeypatch.setattr(processes.os, "killpg", lambda pgid, sig: signalled.append((pgid, sig)))
    # the id now names a live newcomer leading a group of its own
    monkeypatch.setattr(processes, "_group_exists", lambda pgid: pgid == proc.pid)
    monkeypatch.setattr(processes.psutil, "pid_exists", lambda pid: pid == proc.pid)
    stop_group(proc, timeout_s=0.2)
    assert signalled == []


# Starts a server group (``LAUNCHER``: a launcher and its child) the way a fixture does, from a
# thread of a pool, optionally forks a child that lives on (the fork must not keep the group
# alive), then prints the group's pids and sleeps until killed.
STARTER = r"""
import json, os, sys, time
from concurrent.futures import ThreadPoolExecutor
from sparkflow_testing.processes import group_members, spawn_group
launcher, pid_file, log, fork = sys.argv[1:5]
cmd = [sys.executable, "-c", launcher, pid_file, "0", "stop"]
with ThreadPoolExecutor(1) as pool:
    proc = pool.submit(spawn_group, cmd, log).result()
while not (os.path.exists(pid_file) and open(pid_file).read()):
    time.sleep(0.05)
forked = os.fork() if fork == "fork" else -1
if forked == 0:
    time.sleep(60)
    os._exit(0)
print(json.dumps({"group": group_members(proc.pid), "forked": forked}), flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize("fork", ["no-fork", "fork"])
def test_a_group_dies_with_the_process_that_started_it_even_by_sigkill(tmp_path: Path, fork: str) -> None:
    pid_file = tmp_path / "child.pid"
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, LAUNCHER, str(pid_file), str(tmp_path / "log"), fork],
        stdout=subprocess.PIPE,
    )
    assert starter.stdout is not None
    started = json.loads(starter.stdout.readline() or '{"group": [], "forked": -1}')
    members: list[int] = started["group"]
    leftovers = [psutil.Process(pid) for pid in [*members, started["forked"]] if pid > 0]
    try:
        assert len(members) >= 2, f"expected the launcher and its child (and the guard): {members}"
        os.kill(starter.pid, signal.SIGKILL)  # no stop(), no atexit, no finally: the process ends
        starter.wait(10)
        deadline = time.monotonic() + 5
        while [pid for pid in members if _alive(pid)] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in members if _alive(pid)], "the group outlived its starter"
    finally:
        starter.kill()
        starter.wait(10)
        for leftover in leftovers:  # psutil checks the pid still names that process
            with contextlib.suppress(psutil.NoSuchProcess):
                leftover.kill()


def test_a_command_that_cannot_be_executed_fails_as_popen_does(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no-such-server"):
        popen_guarded([str(tmp_path / "no-such-server")])


def test_the_pid_is_the_server_s_and_its_exit_code_is_kept(tmp_path: Path) -> None:
    proc = popen_guarded(
        [sys.executable, "-c", "import os, sys; print(os.getpid()); sys.exit(7)"], stdout=subprocess.PIPE
    )
    out, _ = proc.communicate(timeout=30)  # the guard does not hold the pipe: end of file comes
    assert int(out) == proc.pid
    assert proc.returncode == 7
