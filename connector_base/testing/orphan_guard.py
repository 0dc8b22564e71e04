"""The child side of a process group that dies with the Python process that started it: launcher and guard.

A broker JVM started for a test outlived a pytest run killed with SIGKILL, or a script that never
called ``stop()``: adopted by init, it kept its ports, memory and CPU, and spoiled later benchmarks
on a two-core machine; so did a Spark driver a driver-kill test had started, with its JVM and
Python workers. ``PR_SET_PDEATHSIG`` does not fit: it fires when the *thread* that forked the child
ends, and fixtures start brokers from thread pools.

So the starting Python process holds the write end of a pipe, its *life pipe*, until it ends, by
whatever means (the kernel closes it then), and nothing else holds it:
:func:`connector_base.testing.guarded_popen.popen_guarded` (the starter's side) starts each server
or driver as this file run as a script,
the *launcher*, in a new session, handing it the pipe's read end. The launcher forks a *guard*,
detached (init adopts it) and started afresh as ``orphan_guard.py --guard`` (its command line names
no server), then ``exec``s the server's command. The server thus keeps the pid ``Popen`` returned,
that session, and the process group whose id is that pid: stopping the group, the checks of who
listens, exit codes and parent pids see the same processes as before, plus the guard in the group.
The guard blocks on the pipe's read end and on the server's pidfd:

* end of file on the pipe (the starter is gone): SIGKILL to the process group, the guard included.
  Nobody is left to wait for a clean stop, and the ports are free at once.
* the server exits and nothing else of its group lives: the guard exits too.
* SIGTERM (a stop signals the whole group): the guard dies at once (the default action).

Being a member of the group, the guard keeps the group's id from being handed out again, so the id
it kills always names the group it guards. An ``exec`` that fails is reported the way ``Popen``
reports it: the launcher writes the errno on a close-on-exec pipe the starter reads.

Both run as ``python -I -S`` (no site packages, no ``PYTHON*`` variables) and import only ``os``,
``select``, ``signal`` and ``sys``: the launcher adds about 20 ms to a start, the guard ~10 MB.
"""

from __future__ import annotations

import os
import select
import signal
import sys

__all__ = ["GUARD_FLAG", "launcher_command", "main"]

GUARD_FLAG = "--guard"
"""The guard's first argument: ``python -I -S orphan_guard.py --guard <pipe fd> <group id>``."""

_PYTHON = [sys.executable, "-I", "-S", os.path.abspath(__file__)]


def launcher_command(life: int, report: int, cmd: list[str]) -> list[str]:
    """The launcher's command line: guard with pipe fd ``life``, report on ``report``, run ``cmd``."""
    return [*_PYTHON, str(life), str(report), "--", *cmd]


def _launch(life: int, report: int, cmd: list[str]) -> None:
    """Fork the guard of this process group, then become ``cmd``; write the errno if that fails."""
    os.set_inheritable(report, False)  # closed by the exec of cmd: the starter reads end of file
    group = os.getpgrp()  # this process's pid: it was started in a new session
    middle = os.fork()
    if middle == 0:
        if os.fork() == 0:  # the guard: init adopts it once its parent (this branch) exits
            try:
                os.chdir("/")
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):  # holding the server's stdout (a pipe, say) would delay its EOF
                    os.dup2(null, fd)
                os.execv(sys.executable, [*_PYTHON, GUARD_FLAG, str(life), str(group)])
            finally:
                os._exit(127)
        os._exit(0)
    os.waitpid(middle, 0)
    os.close(life)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these; Popen restores them
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execvp(cmd[0], cmd)
    except OSError as exc:
        os.write(report, str(exc.errno or 0).encode())
    os._exit(127)


def _others_in_group(group: int) -> bool:
    """Whether a live (not zombie) process other than this one belongs to process group ``group``."""
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # ended meanwhile
            continue
        state, _ppid, pgrp = stat[stat.rindex(b")") + 2 :].split()[:3]
        if int(pgrp) == group and state not in (b"Z", b"X"):
            return True
    return False


def _guard(life: int, group: int) -> None:
    """SIGKILL process group ``group`` at end of file on ``life``; return once the group is done."""
    watched = [life]
    try:
        watched.append(os.pidfd_open(group))  # the server: the group's leader
    except ProcessLookupError:  # it has exited and been reaped already
        if not _others_in_group(group):
            return
    while True:
        ready, _, _ = select.select(watched, [], [])
        if life in ready and not os.read(life, 1):  # nobody writes: readable means end of file
            os.killpg(group, signal.SIGKILL)  # this guard included
        if len(watched) > 1 and watched[1] in ready:
            if not _others_in_group(group):
                return
            os.close(watched.pop())  # others of the group live on: the pipe alone decides now


def main(argv: list[str]) -> None:
    """``--guard <pipe fd> <group>`` runs the guard; ``<pipe fd> <report fd> -- <cmd>`` the launcher."""
    if argv[0] == GUARD_FLAG:
        _guard(int(argv[1]), int(argv[2]))
        return
    life, report, separator, *cmd = argv
    if separator != "--" or not cmd:
        raise SystemExit(f"usage: orphan_guard.py <pipe fd> <report fd> -- <command>, not {argv}")
    _launch(int(life), int(report), cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
