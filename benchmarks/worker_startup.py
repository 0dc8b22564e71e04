"""Benchmark: a fresh Spark Python worker's start-up, with and without ``sparkflow_daemon``'s preloading.

Each round starts a new ``local[2]`` session in a new process (new JVM, new daemon, new workers),
with ``SPARKFLOW_DAEMON_PRELOAD`` unset (preloading) and ``0`` (none) taking turns, and runs one
job of two tasks. Each task reports the time from its worker's fork to the task's first line and
then the time to import what a Kafka read's worker unpickles (``connectors.kafka.datasource``).

    python -m benchmarks.worker_startup --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any


def _probe(_rows: Any) -> Iterator[tuple[float, float]]:
    import os
    import time

    now = time.time()
    with open("/proc/self/stat") as f:
        start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/stat") as f:
        boot = next(float(line.split()[1]) for line in f if line.startswith("btime"))
    forked_at = boot + start_ticks / os.sysconf("SC_CLK_TCK")
    t0 = time.perf_counter()
    import connectors.kafka.datasource  # noqa: F401 - what a Kafka read's worker imports

    yield now - forked_at, time.perf_counter() - t0


def child() -> None:
    """One fresh session, one job of two tasks; prints a JSON line."""
    from connector_base.spark import local_spark_session

    spark = local_spark_session("worker-startup")
    t0 = time.perf_counter()
    results = spark.sparkContext.parallelize([1, 2], 2).mapPartitions(_probe).collect()
    first_job = time.perf_counter() - t0
    spark.stop()
    print(
        json.dumps(
            {
                "first_job_s": round(first_job, 2),
                "fork_to_task_s": [round(a, 2) for a, _ in results],
                "kafka_imports_s": [round(b, 3) for _, b in results],
            }
        ),
        flush=True,
    )


def main() -> None:
    """Alternate preloading on and off over ``--rounds`` rounds and print every figure."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child()
        return
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for _ in range(args.rounds):
        for preload in (None, "0"):
            env = {k: v for k, v in os.environ.items() if k != "SPARKFLOW_DAEMON_PRELOAD"}
            if preload is not None:
                env["SPARKFLOW_DAEMON_PRELOAD"] = preload
            out = subprocess.run(
                [sys.executable, "-m", "benchmarks.worker_startup", "--child"],
                env=env,
                cwd=root,
                capture_output=True,
                text=True,
                timeout=600,
                check=True,
            )
            line = next(ln for ln in out.stdout.splitlines() if ln.startswith("{"))
            label = "preload" if preload is None else "no preload"
            print(f"{label:>10}: {line}; load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
