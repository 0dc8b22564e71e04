"""``bulk_read_gc``: fewer cyclic-GC passes while a reader allocates records in bulk.

A fetch hands out tens of thousands of live, GC-tracked objects at once (client message objects,
tuples). With CPython's default first-generation threshold of 700 allocations the collector runs
dozens of times per fetch, each pass traversing the still-live batch and promoting it, so older
generations fill and are traversed again: measured on the Kafka reader (20,000-message fetches), the
collector took half of the process's CPU. A threshold of 50,000 removes nearly all of it while
cycles are still collected. Reference counting frees the records themselves either way.

Threading: the thresholds are process-wide. Nested or concurrent users are counted; the first one
in raises the threshold and the last one out restores what it found.
"""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

__all__ = ["BULK_GEN0_THRESHOLD", "bulk_gc", "bulk_read_gc"]

P = ParamSpec("P")
"""The wrapped function's parameters."""
R = TypeVar("R")
"""The wrapped function's result."""

BULK_GEN0_THRESHOLD = 50_000

_lock = threading.Lock()
_users = 0
_saved: tuple[int, int, int] | None = None


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
