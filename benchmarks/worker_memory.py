"""Peak RSS of the Python worker reading a backlog, against the backlog's size (issue 17, growth).

One text file of each size is read by ``files-unified`` through Spark (``local[1]``, one task: split
and partition sizes larger than the file, so one Python worker reads the whole backlog) into the
``noop`` sink. A sampler polls the resident memory of every Python process under this driver
(psutil when installed, else ``/proc``) every 20 ms; the worker's peak is printed per size with
its growth against the smallest size. A reader bounded by its hand-off queue (capacity
``source.reader.element.queue.capacity``, default 2, of fetches of at most ``CHUNK_BYTES``) has a
flat peak; one that buffers the backlog grows with it.

    python -m benchmarks.worker_memory [--sizes-mb 64,256] [--workdir DIR]

The issue's 2 GB case: ``--sizes-mb 64,512,2048`` (needs that much free disk; minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time

from connector_base.spark import local_spark_session
from connector_base.synchronization.future_completing_blocking_queue import DEFAULT_CAPACITY
from connectors.files.split_reader import CHUNK_BYTES

MIB = 1024 * 1024
SAMPLE_S = 0.02


def _children(pid: int) -> list[int]:
    try:
        import psutil

        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except ImportError:
        parents: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                parents.setdefault(ppid, []).append(int(entry))
        out, todo = [], [pid]
        while todo:
            kids = parents.get(todo.pop(), [])
            out += kids
            todo += kids
        return out


def _python_rss(pid: int) -> int | None:
    """Resident bytes of ``pid`` when it runs Python, else ``None``."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv0 = f.read().split(b"\0", 1)[0]
        if b"python" not in os.path.basename(argv0):
            return None
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class Sampler(threading.Thread):
    """Polls the Python workers' RSS until stopped; ``peak`` is the largest single worker seen."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0
        self._done = threading.Event()

    def run(self) -> None:
        me = os.getpid()
        while not self._done.is_set():
            for pid in _children(me):
                rss = _python_rss(pid)
                if rss is not None:
                    self.peak = max(self.peak, rss)
            time.sleep(SAMPLE_S)

    def stop(self) -> int:
        self._done.set()
        self.join()
        return self.peak


def write_backlog(path: str, size_mb: int) -> int:
    """A text file of ``size_mb`` MiB of 100-byte lines; returns its line count."""
    line = ("x" * 99 + "\n").encode()
    block = line * (MIB // len(line))
    with open(path, "wb") as f:
        for _ in range(size_mb):
            f.write(block)
    return size_mb * (MIB // len(line))


def main() -> int:
    """Write each backlog, read it through one Spark task, print the worker's peak RSS."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", default="64,256")
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    sizes = sorted(int(x) for x in args.sizes_mb.split(","))
    root = tempfile.mkdtemp(prefix="worker-memory-", dir=args.workdir)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        f"hand-off queue: capacity {DEFAULT_CAPACITY} fetches of at most {CHUNK_BYTES // MIB} MiB "
        f"(files-unified CHUNK_BYTES)"
    )
    spark = local_spark_session("worker-memory", cores=1)
    spark.sparkContext.setLogLevel("ERROR")
    results: list[tuple[int, int, float, int]] = []
    try:
        # warm-up: a worker exists and has imported everything before the first measured size
        warm = os.path.join(root, "warm.txt")
        write_backlog(warm, 1)
        spark.read.format("files-unified").option("format", "text").load(warm).write.format("noop").mode(
            "overwrite"
        ).save()
        for size in sizes:
            path = os.path.join(root, f"backlog-{size}.txt")
            lines = write_backlog(path, size)
            big = str((size + 1) * MIB)
            df = (
                spark.read.format("files-unified")
                .option("format", "text")
                .option("splitSizeBytes", big)
                .option("maxPartitionBytes", big)
                .load(path)
            )
            sampler = Sampler()
            sampler.start()
            t0 = time.monotonic()
            df.write.format("noop").mode("overwrite").save()
            seconds = time.monotonic() - t0
            peak = sampler.stop()
            results.append((size, peak, seconds, lines))
            os.remove(path)
            print(f"  {size} MiB: peak worker RSS {peak / MIB:.0f} MiB in {seconds:.1f}s", flush=True)
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    header = f"{'backlog MiB':>12}{'lines':>12}{'peak worker RSS MiB':>21}{'x smallest':>12}"
    print(f"{header}{'RSS/backlog':>13}{'s':>8}")
    base = results[0][1] if results else 1
    for size, peak, seconds, lines in results:
        print(
            f"{size:>12}{lines:>12}{peak / MIB:>21.0f}{peak / base:>12.2f}{peak / (size * MIB):>13.2f}"
            f"{seconds:>8.1f}"
        )
    if len(results) > 1:
        (s0, p0, _, _), (s1, p1, _, _) = results[0], results[-1]
        print(f"backlog x{s1 / s0:.0f} -> peak worker RSS x{p1 / p0:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
