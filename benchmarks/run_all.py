"""``make bench``: run every benchmark that exists, each printing its ratio against its baseline."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

BENCHMARKS = [
    "benchmarks.reader_base_overhead",
    "benchmarks.files_read",
    "benchmarks.kafka_read",
    "benchmarks.kinesis_read",
    "benchmarks.pravega_read",
    "benchmarks.async_io",
]


def main() -> int:
    """Run each benchmark module in its own process (each may start Spark)."""
    failed = 0
    for name in BENCHMARKS:
        if importlib.util.find_spec(name) is None:
            continue
        print(f"== {name}", flush=True)
        failed += subprocess.call([sys.executable, "-m", name]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
