"""``bulk_read_gc``: fewer cyclic-GC passes while a reader allocates records in bulk.

A fetch hands out tens of thousands of live, GC-tracked objects at once (client message objects,
tuples). With CPython's default first-generation threshold of 700 allocations the collector runs
dozens of times per fetch, each pass traversing the still-live batch and promoting it, so older
generations fill and are traversed again: measured on the Kafka reader (20,000-message fetches), the
collector took half of the process's CPU. A threshold of 50,000 removes nearly all of it while
cycles are still collected. Reference counting frees the records themselves either way.

Threading: the thresholds are process-wide. Nested or concurrent users are counted; the first one
in raises the threshold and the last one out restores what it found.

``freeze_imported_objects``: Spark's reused Python workers run a full ``gc.collect()`` after every
task (``pyspark/daemon.py``), and a full collection traverses every tracked object. Most of a
worker's are its modules' (pandas alone, which the worker imports after Spark's daemon forks it,
brings about 36,000): measured in the latency benchmark's read tasks, that collection took 10-80 ms
per task on this 2-core machine, more than reading the task's records, up to a quarter of a
micro-batch of six tasks. Moving them into the permanent generation (``gc.freeze``) takes them out
of every later collection; ``sparkflow_daemon`` does the same for what it preloads before forking.
"""

from __future__ import annotations

import functools
import gc
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

__all__ = [
    "BULK_GEN0_THRESHOLD",
    "bulk_gc",
    "bulk_read_gc",
    "freeze_imported_objects",
    "freeze_imported_objects_in_reused_worker",
]

P = ParamSpec("P")
"""The wrapped function's parameters."""
R = TypeVar("R")
"""The wrapped function's result."""

BULK_GEN0_THRESHOLD = 50_000

_lock = threading.Lock()
_users = 0
_saved: tuple[int, int, int] | None = None
_frozen_at: tuple[int, int] | None = None
"""(process id, number of modules) at the last ``freeze_imported_objects`` that froze."""


@contextmanager
def bulk_read_gc(gen0_threshold: int = BULK_GEN0_THRESHOLD) -> Iterator[None]:
    """Raise the first-generation GC threshold to at least ``gen0_threshold`` inside the block."""
    global _users, _saved
    with _lock:
        if _users == 0:
            _saved = gc.get_threshold()
            if _saved[0] and _saved[0] < gen0_threshold:  # 0 means automatic GC is off: leave it
                gc.set_threshold(gen0_threshold, _saved[1], _saved[2])
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None


def bulk_gc(fn: Callable[P, R]) -> Callable[P, R]:
    """Run ``fn`` under ``bulk_read_gc``: for driver steps that build objects per split in bulk.

    Planning a micro-batch of N splits allocates a few objects per split (offset entries, serialized
    range splits); with the default threshold, full collections traverse the growing heap again and
    again (measured: about half of ``latestOffset`` + ``partitions`` at 1,000 and 10,000 files).
    """

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with bulk_read_gc():
            return fn(*args, **kwargs)

    return wrapper


def freeze_imported_objects() -> bool:
    """Collect, then freeze every tracked object, if modules were imported since the last freeze.

    Called at the start of each read task, and of each planning step in Spark's reused workers
    (``freeze_imported_objects_in_reused_worker``). Whether anything was imported is judged by the size of
    ``sys.modules`` (constant time), so a process freezes once on its first task, again after a task
    that imported more (a reader's client library on its first use), and never for steady tasks. The
    collection first means no garbage is frozen; what the task itself holds at that moment (its
    function and partition: a few kilobytes) stays for the process's life. Returns whether it froze.
    """
    global _frozen_at
    mark = (os.getpid(), len(sys.modules))
    with _lock:
        if mark == _frozen_at:
            return False
        gc.collect()
        gc.freeze()
        _frozen_at = mark
        return True


def freeze_imported_objects_in_reused_worker() -> bool:
    """``freeze_imported_objects``, but only in Spark's reused Python workers (``SPARK_REUSE_WORKER``
    set, as ``pyspark/daemon.py`` reads it), which collect after every task.

    For the data source's planning steps (``schema``, ``reader``, ``streamReader``). Spark runs them
    in such a worker on every query (``PythonPlannerRunner``). A driver, a test or the local runtime
    runs them too, but collects nothing after them: a collection there would be paid for nothing.

    Measured on the Kafka source: the collection after each planning task took ~42 ms of the
    planning worker's CPU, two per batch query, on this 2-core machine (2026-11-29).
    """
    if not os.environ.get("SPARK_REUSE_WORKER"):
        return False
    return freeze_imported_objects()
