"""Driver-kill tests: run a Spark driver script as a process group and SIGKILL it like a crash.

A driver's Python process starts a JVM, which starts Python workers; killing only the Python
process would leave the JVM running. ``DriverProcess`` starts the script in a new session and kills
the whole group; the group also dies with the test process, however that ends (a test run killed
mid-test left a driver's JVM behind: ``guarded_popen``). ``run_and_kill_after_first_commit`` is
the common shape of such a test: start the driver, wait until Spark committed a first micro-batch,
wait a little longer, and kill it.

Driver scripts print ``DONE`` when their query finished.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from connector_base.testing.guarded_popen import popen_guarded

__all__ = ["DriverProcess", "log_entries", "run_and_kill_after_first_commit"]


def log_entries(directory: Path) -> int:
    """Entries of a Spark checkpoint log directory (``offsets`` or ``commits``)."""
    return len(list(directory.glob("[0-9]*"))) if directory.exists() else 0


class DriverProcess:
    """``python <script> <args>`` in its own process group, stdout captured."""

    def __init__(self, script: Path, args: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.proc = popen_guarded(
            [sys.executable, str(script), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(env if env is not None else os.environ, PYTHONUNBUFFERED="1"),
        )

    def wait_for(self, predicate: Callable[[], bool], timeout_s: float = 300.0) -> None:
        """Poll ``predicate`` until true; fail if the driver exits first or the time runs out."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if predicate():
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"the driver exited with {self.proc.returncode} before the wait ended")
            time.sleep(0.05)
        raise AssertionError(f"timed out after {timeout_s}s waiting for the driver")

    def kill(self) -> None:
        """SIGKILL the whole group: the driver, its JVM and the Python workers."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(30)

    def finish(self, timeout_s: float = 400.0) -> bool:
        """Wait for the driver to end by itself; whether it printed ``DONE``."""
        try:
            out, _ = self.proc.communicate(timeout=timeout_s)
        finally:
            if self.proc.poll() is None:
                self.kill()
        return b"DONE" in out


def run_and_kill_after_first_commit(
    script: Path,
    args: Sequence[str],
    checkpoint: Path,
    kill_after_s: float | None,
    *,
    first_commit_timeout_s: float = 180.0,
    timeout_s: float = 400.0,
) -> bool:
    """Run the driver; with ``kill_after_s``, SIGKILL it that long after its first committed batch.

    Returns whether the driver finished (printed ``DONE``); ``False`` when it was killed.
    """
    driver = DriverProcess(script, args)
    try:
        if kill_after_s is not None:
            deadline = time.monotonic() + first_commit_timeout_s
            commits = checkpoint / "commits"
            while time.monotonic() < deadline and driver.proc.poll() is None:
                if log_entries(commits):
                    break
                time.sleep(0.1)
            time.sleep(kill_after_s)
            if driver.proc.poll() is None:
                driver.kill()
                return False
        return driver.finish(timeout_s)
    finally:
        if driver.proc.poll() is None:
            driver.kill()
