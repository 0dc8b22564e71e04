"""Server processes for test fixtures: free ports, spawning in a process group, waiting, stopping.

Servers run in their own session (``start_new_session``), so the launcher's pid is the process
group id of everything it starts: launchers such as ``noida-db`` start the real binary as a child,
which would otherwise outlive the fixture.

Stopping waits for the whole group, not only for the launcher: :func:`stop_group` signals the group
and returns once no live process is left in it (SIGKILL after the grace period, an error naming the
survivors if even that does not end them). A restart that only waited for the launcher raced the old
binary: the new launcher found the old one still running on the same data directory and exited,
while the port still answered (issue 21). :func:`wait_listening` therefore also checks, where the
system tells (``psutil``: ``/proc`` on Linux), that the process listening on the port belongs to
the group just started, and it fails if the process it started has exited.

Every group also dies with the Python process that started it, however that ends (SIGKILL
included, and ``stop()`` never called): :func:`popen_guarded` (the connector test kit's
:mod:`connector_base.testing.guarded_popen`, re-exported here), which :func:`spawn_group` uses,
keeps a pipe's write end open in this process until it ends and starts the server through
:mod:`connector_base.testing.orphan_guard`, which adds to the group a guard that kills the group at
that pipe's end of file (why a pipe and not ``PR_SET_PDEATHSIG``: see there).

``psutil`` (a dependency of ``sparkflow-testing``) reads the process table and socket owners; this
module only decides what "gone" and "ours" mean: a zombie (exited, not yet reaped by its parent) is
gone, and a listener whose owner cannot be read (another user's process) is not held against us.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psutil

from connector_base.testing.guarded_popen import popen_guarded

__all__ = [
    "KILL_WAIT_S",
    "exit_report",
    "free_port",
    "group_members",
    "machine_state",
    "listening_pids",
    "popen_guarded",
    "spawn_group",
    "stop_group",
    "wait_group_gone",
    "wait_listening",
]

_POLL_S = 0.1
KILL_WAIT_S = 10.0
"""How long a SIGKILLed group may take to disappear before :func:`stop_group` gives up loudly."""

_LOG_HEADLINE = re.compile(r"\b(ERROR|FATAL|SEVERE)\b")
_LOG_CAUSE = re.compile(r"^Caused by:|^\S*(Error|Exception)\b|^Error:|Address already in use")


def exit_report(what: str, returncode: int | None, log_text: str) -> str:
    """``<what> exited with <rc>: <its reason> (<free disk, memory>) | <log tail>``.

    A failure in CI is shown by its first line only, and a server's log tail begins with start-up
    noise (SLF4J warnings, banners) and ends in stack frames. The reason put first is the log's last
    line that says ERROR, FATAL or SEVERE, then the last exception lines after it (the chain of
    ``Caused by:`` ends in the root cause); or, with no such line, the last exception lines. The
    machine's free disk (temporary directory) and memory follow: a server short of either often
    says nothing.
    """
    lines = [line.strip() for line in log_text.splitlines()]
    heads = [i for i, line in enumerate(lines) if _LOG_HEADLINE.search(line)]
    after = heads[-1] + 1 if heads else 0
    picked = ([lines[heads[-1]]] if heads else []) + [
        line for line in lines[after:] if _LOG_CAUSE.search(line)
    ][-3:]
    reason = " / ".join(picked)[:700] if picked else "no error line in its log"
    return f"{what} exited with {returncode}: {reason} ({machine_state()}) | log tail: {log_text[-2000:]}"


def machine_state() -> str:
    """``disk free <MB> MB in <tmp>, memory available <MB> MB``: what a failed start may have lacked."""
    tmp = tempfile.gettempdir()
    disk = shutil.disk_usage(tmp).free >> 20
    memory = psutil.virtual_memory().available >> 20
    return f"disk free {disk:,} MB in {tmp}, memory available {memory:,} MB"


FREE_PORTS = range(20000, 32768)
"""Where ``free_port`` looks: below Linux's ephemeral range (``ip_local_port_range``, 32768-60999 by
default), which the kernel hands to every bind to port 0 and to every client socket."""


def free_port() -> int:
    """A free TCP port on the loopback interface, from ``FREE_PORTS``.

    Not a port the kernel picks for a bind to port 0: the kernel may hand that same port to another
    process (a Spark driver's random ports, a client connection) before the server started for it
    binds it, and in a four-lane run a Kafka broker found its port taken that way. A port below the
    ephemeral range is only taken by an explicit choice. Falls back to the kernel's pick when 100
    random tries find none free.
    """
    for _ in range(100):
        port = random.randrange(FREE_PORTS.start, FREE_PORTS.stop)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn_group(
    cmd: list[str], log: Path | None, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start ``cmd`` in a new session, its output appended to ``log`` (discarded without one).

    ``env`` replaces the environment (secrets go there, not on the command line ``ps`` shows). The
    group is killed when this Python process ends without stopping it
    (:mod:`connector_base.testing.orphan_guard`).
    """
    out = open(log, "ab") if log else subprocess.DEVNULL  # closed below: the child keeps its own copy
    try:
        return popen_guarded(
            cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd, env=env
        )
    finally:
        if log:
            out.close()  # type: ignore[union-attr]


def group_members(pgid: int) -> list[int]:
    """The pids of the live (not zombie) processes in process group ``pgid``."""
    members = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                members.append(proc.pid)
        except (ProcessLookupError, psutil.NoSuchProcess, PermissionError, psutil.AccessDenied):
            continue
    return members


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's group now: ours is gone
        return False
    return bool(group_members(pgid))  # only zombies left (not yet reaped by their parent) is gone


def wait_group_gone(pgid: int, timeout_s: float) -> bool:
    """Poll until process group ``pgid`` has no live process; ``False`` if it still has one at the end."""
    deadline = time.monotonic() + timeout_s
    while _group_exists(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_S)
    return True


def _orphaned_group(pgid: int) -> bool:
    """Whether process group ``pgid``, whose leader was reaped, still has members of its own.

    Linux hands out no pid that still names a process group, so while any member lives the id is
    ours. Once the group is empty the id is free: a new process can get it as its pid, and as its
    group id if it starts a session (every launcher here does). A live process whose pid is the
    group id is therefore such a newcomer, never the launcher we reaped, and its group not ours.
    """
    return _group_exists(pgid) and not psutil.pid_exists(pgid)


def stop_group(proc: subprocess.Popen[bytes], timeout_s: float = 10.0) -> None:
    """Stop the process group of ``proc`` and return only when every process of it is gone.

    SIGTERM first (a clean stop), SIGKILL to whatever is left after ``timeout_s``. The group is
    signalled even when ``proc`` (the launcher) has exited already: its children may live on. Once the
    launcher has been reaped (an earlier stop, or a ``poll()`` that saw it exit), the group is
    signalled only while it is still the launcher's (:func:`_orphaned_group`): a stop after the group
    is gone never signals a group that took over the recycled id. Raises
    ``RuntimeError`` naming the survivors if the group outlives SIGKILL by :data:`KILL_WAIT_S`.
    """
    pgid = proc.pid
    if proc.returncode is not None and not _orphaned_group(pgid):
        return  # reaped before and nothing of its group is left: the id may name another group now
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout_s)  # reap the launcher (our child), or it stays a zombie in the group
    if wait_group_gone(pgid, max(0.0, deadline - time.monotonic())):
        return
    if proc.returncode is not None and not _orphaned_group(pgid):
        return  # gone while we waited, and the id already taken by another group
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(KILL_WAIT_S)
    if not wait_group_gone(pgid, KILL_WAIT_S):
        raise RuntimeError(f"process group {pgid} survived SIGKILL: pids {group_members(pgid)} still run")


def listening_pids(port: int) -> set[int] | None:
    """The pids holding a TCP socket that listens on ``port``; ``None`` when the system does not say."""
    try:
        connections = psutil.net_connections(kind="tcp")
    except (psutil.AccessDenied, PermissionError, NotImplementedError):
        return None
    owners = {
        c.pid
        for c in connections
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid is not None
    }
    return owners or None  # a listener nobody owns (in our view) belongs to another user


def wait_listening(
    host: str, port: int, proc: subprocess.Popen[bytes] | None, timeout_s: float, log: Path | None, what: str
) -> None:
    """Wait until ``host:port`` accepts connections from the process group of ``proc``.

    Fails early, with the log's tail, if ``proc`` exits. Where the listening socket's owner can be
    read, it must be in ``proc``'s process group: a port still held by an earlier instance (a restart
    racing the old process) is waited out, and reported by pid on timeout.
    """
    deadline = time.monotonic() + timeout_s
    foreign: set[int] = set()
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            text = log.read_text(errors="replace") if log and log.exists() else ""
            raise RuntimeError(exit_report(what, proc.returncode, text))
        try:
            with socket.create_connection((host, port), timeout=0.5):
                pass
        except OSError:
            time.sleep(0.1)
            continue
        if proc is None:
            return
        owners = listening_pids(port)
        foreign = {pid for pid in owners if _pgid(pid) != proc.pid} if owners is not None else set()
        if not foreign and proc.poll() is None:  # ours, or unknown but what we started still runs
            return
        time.sleep(0.1)
    if foreign:
        raise TimeoutError(
            f"{what} on {host}:{port}: the port is held by pid {sorted(foreign)}, not by the process "
            f"group {proc.pid if proc else '?'} just started, after {timeout_s}s"
        )
    raise TimeoutError(f"{what} on {host}:{port} did not listen within {timeout_s}s")


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None
