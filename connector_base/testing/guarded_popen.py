"""Start a command in a new process group that dies with this Python process, however it ends.

The starter's side of :mod:`connector_base.testing.orphan_guard` (the child's side, and why a pipe):
this process holds the write end of a *life pipe* until it ends (the kernel closes it then, SIGKILL
included), and ``popen_guarded`` starts a command through the orphan guard's launcher, which puts a
guard in the command's new process group that SIGKILLs the group at the pipe's end of file.

The connector test kit's :class:`~connector_base.testing.driver_process.DriverProcess` starts its
Spark drivers this way (a killed test run left a driver's JVM and Python workers behind), and the
test infrastructure its brokers and services (``sparkflow_testing.processes.spawn_group``).

Threading: ``popen_guarded`` may be called from any thread; the life pipe is made once per process
under a lock, and a child forked without ``exec`` closes its copy (it is not that child's life).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from connector_base.testing.orphan_guard import launcher_command

__all__ = ["popen_guarded"]

_life_lock = threading.Lock()
_life: tuple[int, int] | None = None
"""This process's life pipe (read end, write end), created on first use; never closed on purpose."""


def _life_pipe() -> int:
    """The read end of this process's life pipe (both ends close-on-exec: no child inherits them)."""
    global _life
    with _life_lock:
        if _life is None:
            _life = os.pipe()
        return _life[0]


def _close_inherited_life_pipe() -> None:
    """In a child forked without ``exec``: close the parent's life pipe, which is not this child's."""
    global _life, _life_lock
    _life_lock = threading.Lock()  # another thread may have held the parent's at the fork
    if _life is not None:
        for fd in _life:
            with contextlib.suppress(OSError):
                os.close(fd)
        _life = None


os.register_at_fork(after_in_child=_close_inherited_life_pipe)


def popen_guarded(
    cmd: list[str],
    *,
    stdin: int | IO[Any] | None = None,
    stdout: int | IO[Any] | None = None,
    stderr: int | IO[Any] | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """``Popen(cmd, start_new_session=True, ...)`` whose process group dies with this process.

    Returns once ``cmd`` runs (as the returned pid: the launcher ``exec``s it), or raises the
    ``OSError`` ``Popen`` would raise if it cannot be executed. ``stdin``, ``stdout``, ``stderr``,
    ``cwd`` and ``env`` are ``Popen``'s (``env`` replaces the environment, ``PATH`` included).
    """
    life = _life_pipe()
    report_r, report_w = os.pipe()
    with open(report_r, "rb") as report:
        try:
            proc = subprocess.Popen(
                launcher_command(life, report_w, cmd),
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                cwd=cwd,
                env=env,
                start_new_session=True,
                pass_fds=(life, report_w),
            )
        finally:
            os.close(report_w)
        failure = report.read()  # end of file once the launcher's exec of cmd closed its copy
    if failure:
        proc.wait()
        code = int(failure)
        raise OSError(code, os.strerror(code), cmd[0])
    return proc
