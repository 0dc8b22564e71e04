"""``retain_freed_memory``: freed buffers stay mapped for the next allocation, unless the user chose.

Each case runs in a child interpreter: the thresholds are process-wide and cannot be undone.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc only"
)

# 20 rounds of what a fetch does: hold four 12 MiB blocks at once (a response, its decompressed
# records, the Arrow batch), touch them, free them all; count the page faults
_CHILD = """
import ctypes, json, resource, sys
from connector_base.malloc_tuning import retain_freed_memory
first = retain_freed_memory() if sys.argv[1] == "tune" else None
again = retain_freed_memory() if sys.argv[1] == "tune" else None
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
size = 12 * 1024 * 1024
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    blocks = [libc.malloc(size) for _ in range(4)]
    for block in blocks:
        ctypes.memset(block, 1, size)
    for block in blocks:
        libc.free(block)
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(json.dumps({"first": first, "again": again, "faults": faults}))
"""


def _run(mode: str, **env: str) -> dict[str, object]:
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    child_env.update(env)
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, mode],
        capture_output=True,
        text=True,
        env=child_env,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_a_freed_block_is_reused_without_faulting_its_pages_in_again() -> None:
    pages = 4 * 12 * 1024 * 1024 // 4096  # one round's
    untuned = _run("plain")
    tuned = _run("tune")
    assert tuned["first"] is True and tuned["again"] is False  # once per process
    # glibc's defaults: the first free maps the block, and the heap's top is trimmed after each free
    assert int(untuned["faults"]) > 5 * pages, untuned
    # raised thresholds: the pages are faulted in once and reused by the next 19 allocations
    assert int(tuned["faults"]) < 2 * pages, tuned


@pytest.mark.parametrize(
    "env",
    [
        {"MALLOC_TRIM_THRESHOLD_": "131072"},
        {"MALLOC_MMAP_THRESHOLD_": "131072"},
        {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=131072"},
    ],
)
def test_the_users_own_allocator_settings_are_left_alone(env: dict[str, str]) -> None:
    assert _run("tune", **env)["first"] is False
