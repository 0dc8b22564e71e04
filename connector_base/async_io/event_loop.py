"""One asyncio event loop per Python worker process, on its own thread, reused across Spark tasks.

Threading: the loop runs on a daemon thread named ``async-io-loop``, started lazily by the first
``worker_event_loop()`` call in a process. PySpark's daemon forks its workers, and a forked child
inherits the loop object but not its thread; the loop is therefore keyed by process id (and
forgotten in the child by an at-fork hook), so a child starts its own loop on first use.
"""

from __future__ import annotations

import asyncio
import os
import threading
from dataclasses import dataclass

__all__ = ["worker_event_loop"]

THREAD_NAME = "async-io-loop"


@dataclass(frozen=True, slots=True)
class _LoopThread:
    pid: int
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread


_lock = threading.Lock()
_current: _LoopThread | None = None


def _start() -> _LoopThread:
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(started.set)
        loop.run_forever()

    thread = threading.Thread(target=run, name=THREAD_NAME, daemon=True)
    thread.start()
    started.wait()
    return _LoopThread(os.getpid(), loop, thread)


def worker_event_loop() -> asyncio.AbstractEventLoop:
    """This process's event loop, running on its own thread; started on first use."""
    global _current
    with _lock:
        current = _current
        if current is None or current.pid != os.getpid() or not current.thread.is_alive():
            current = _current = _start()
        return current.loop


def _forget_in_child() -> None:
    # the parent's loop thread does not exist here, and _lock may have been held at fork time
    global _current, _lock
    _current = None
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)
