"""Server processes for test fixtures: free ports, spawning in a process group, waiting, stopping.

Servers run in their own session (``start_new_session``) so that stopping one kills the whole
group: launchers such as ``noida-db`` start the real binary as a child, which would otherwise
outlive the fixture.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

__all__ = ["free_port", "spawn_group", "stop_group", "wait_listening"]


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn_group(cmd: list[str], log: Path | None, cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """Start ``cmd`` in a new session, its output appended to ``log`` (discarded without one)."""
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    try:
        return subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=cwd,
        )
    finally:
        if log:
            out.close()  # type: ignore[union-attr]


def wait_listening(
    host: str, port: int, proc: subprocess.Popen[bytes] | None, timeout_s: float, log: Path | None, what: str
) -> None:
    """Wait until ``host:port`` accepts connections; fail early, with the log's tail, if ``proc`` exits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            text = log.read_text(errors="replace") if log and log.exists() else ""
            raise RuntimeError(f"{what} exited with {proc.returncode}: {text[-2000:]}")
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"{what} on {host}:{port} did not listen within {timeout_s}s")


def stop_group(proc: subprocess.Popen[bytes], timeout_s: float = 10.0) -> None:
    """SIGTERM the process group of ``proc`` (a clean stop), SIGKILL it if it lingers."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout_s)
