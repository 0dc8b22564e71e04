"""``retain_freed_memory``: a reader process keeps the C heap's freed memory for its next fetch.

A reader allocates the same large buffers again and again: each fetch response (up to
``max.partition.fetch.bytes``), each decompressed record batch, each Arrow batch (tens of
megabytes). glibc's ``malloc`` serves a block above its mmap threshold (128 KiB at start, raised
to the size of the last freed mapping up to 32 MiB) with a fresh mapping, and gives the top of its
heap back to the kernel once more than its trim threshold (twice the mmap threshold) is free. Both
return the memory a fetch just freed to the kernel, so the next fetch faults every page in again
and the kernel zeroes each one. Measured in the Python workers of a Spark session reading an lz4
topic through the compiled Kafka reader, back to back for 15 s (``perf stat``): 96,717 page faults
with glibc's defaults, 1,694 with the thresholds below. Zeroing those pages was about a tenth of
the worker's CPU in ``perf``'s profile; in ``benchmarks/kafka_read.py``'s per-query CPU medians the
difference is within the noise (0.35-0.44 against 0.33-0.35 CPU-s for 600,000 records, 2026-11-29).

The thresholds are raised once per process, at a read task's start: an mmap threshold of 32 MiB
(glibc's largest on 64-bit) and a trim threshold of 256 MiB (the Kafka readers' own prefetch
bound, ``queued.max.messages.kbytes``). A worker then keeps up to that much freed memory mapped,
as a JVM executor keeps its heap. Where the process's allocator was already chosen (``GLIBC_TUNABLES``
naming a ``glibc.malloc`` setting, or ``MALLOC_TRIM_THRESHOLD_`` / ``MALLOC_MMAP_THRESHOLD_`` in the
environment) nothing is changed, so a user who wants glibc's defaults sets them there. On a C
library other than glibc (musl, macOS) this does nothing.

Written here rather than taken from a library: the work is two ``mallopt`` calls through ``ctypes``;
no maintained Python package wraps them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import threading

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "retain_freed_memory"]

MMAP_THRESHOLD = 32 * 1024 * 1024
"""Blocks this large or larger get a mapping of their own (glibc's maximum, ``HEAP_MAX_SIZE / 2``)."""
TRIM_THRESHOLD = 256 * 1024 * 1024
"""Freed memory at the heap's top beyond this goes back to the kernel."""

_M_TRIM_THRESHOLD = -1  # glibc's malloc.h
_M_MMAP_THRESHOLD = -3
_USER_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")

_lock = threading.Lock()
_done_in: int | None = None
"""The process id that last ran ``retain_freed_memory`` (a forked child runs it again)."""


def _user_chose_allocator() -> bool:
    if any(name in os.environ for name in _USER_SETTINGS):
        return True
    return "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", "")


def retain_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds in this process, once; whether they were raised now."""
    global _done_in
    with _lock:
        if _done_in == os.getpid():
            return False
        _done_in = os.getpid()
        if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc" or _user_chose_allocator():
            return False
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        # mallopt returns 1 on success; a value it refuses leaves that setting as it was
        trim = libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
        mmap = libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        return bool(trim == 1 and mmap == 1)
