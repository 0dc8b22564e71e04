"""Sum ``py-spy record --format raw`` stacks of Spark's Python workers by where the time goes.

Each sample is given to the first category whose rule matches, walking its frames from the leaf
towards the root (so a sample in ``socket.recv_into`` under the segment store client counts as a
segment read, and one in Spark's serializer that is not inside the source as Spark's). A rule
matches a frame's file (a path suffix), optionally its function, optionally the text of its source
line (read from this checkout, for lines of one function that do different things). Samples of
processes that are not Python workers (the driver, the JVM) are left out; so is the daemon's
accept loop, which py-spy sees as busy while it waits.

    python -m benchmarks.profile_summary FILE.raw [FILE.raw ...] [--top 15]
"""

from __future__ import annotations

import argparse
import linecache
import os
import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["CATEGORIES", "print_summary", "summarise"]

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*):(?P<line>\d+)\)$")


@dataclass(frozen=True, slots=True)
class Rule:
    """A frame belongs to ``category`` if its file ends with ``file`` (and function / line text match)."""

    category: str
    file: str
    function: str | None = None
    line_has: tuple[str, ...] = ()


CATEGORIES: tuple[Rule, ...] = (
    # the Pravega segment split reader's own lines
    Rule(
        "segment reads",
        "connectors/pravega/split_reader.py",
        "_read",
        # gathering the fetch's bytes: b"".join before 73fea5c, a reused buffer since
        ("join(", "self._cluster().read", "parts.append", "view[", "bytearray(", "memoryview(", "bytes(buf["),
    ),
    Rule(
        "Arrow building",
        "connectors/pravega/split_reader.py",
        "_read",
        ("pa.", "const_string_array", "schema=", "decoded."),
    ),
    Rule("Arrow building", "connectors/pravega/split_reader.py", "constant_columns"),
    Rule("Arrow building", "connectors/pravega/event_decoding.py", "const_string_array"),
    Rule("event decoding", "connectors/pravega/event_decoding.py"),
    Rule("segment reads", "connectors/pravega/segment_store_client.py"),
    Rule("segment reads", "connectors/pravega/cluster_client.py", "read"),
    Rule("segment reads", "connectors/pravega/cluster_client.py", "info"),
    Rule("reader start-up (clients, connections)", "connectors/pravega/cluster_client.py"),
    Rule("reader start-up (clients, connections)", "connectors/pravega/controller_client.py"),
    Rule("split reader (other)", "connectors/pravega/split_reader.py"),
    # the shared base
    Rule("Arrow building", "connector_base/spark/arrow_output.py"),
    Rule("queue hand-off (fetcher, queue, emitter, reader loop)", "connector_base/synchronization/"),
    Rule("queue hand-off (fetcher, queue, emitter, reader loop)", "connector_base/fetcher/"),
    Rule("queue hand-off (fetcher, queue, emitter, reader loop)", "connector_base/source_reader_base.py"),
    Rule("queue hand-off (fetcher, queue, emitter, reader loop)", "connectors/pravega/record_emitter.py"),
    Rule("queue hand-off (fetcher, queue, emitter, reader loop)", "connector_base/spark/partition_reader.py"),
    Rule("planning (driver-side workers)", "connector_base/spark/bridge.py", "partitions"),
    Rule("planning (driver-side workers)", "connectors/pravega/planner.py"),
    Rule("source set-up (options, source, schema)", "connector_base/"),
    Rule("source set-up (options, source, schema)", "connectors/"),
    # Spark's side of the worker
    Rule("floor source (pre-built batches)", "benchmarks/spark_floor.py"),
    Rule("worker start-up (imports)", "<frozen importlib._bootstrap>"),
    Rule("worker start-up (imports)", "<frozen importlib._bootstrap_external>"),
    Rule("Spark's serialization (Arrow stream to the JVM)", "pyspark/sql/pandas/serializers.py"),
    Rule("Spark's serialization (Arrow stream to the JVM)", "pyspark/serializers.py"),
    Rule(
        "Spark's data source wrapper (schema checks per batch)", "pyspark/sql/worker/plan_data_source_read.py"
    ),
    Rule("Spark's worker (other)", "pyspark/"),
)
_DAEMON_LOOP = ("daemon.py", "manager")


def _frame(text: str) -> tuple[str, str, int] | None:
    m = _FRAME.match(text)
    if not m:
        return None
    return m["func"], m["file"], int(m["line"])


def _matches(rule: Rule, func: str, file: str, line: int) -> bool:
    if not (file.endswith(rule.file) or rule.file in file):
        return False
    if rule.function is not None and func.split(".")[-1] != rule.function:
        return False
    if rule.line_has:
        path = file if os.path.isabs(file) else os.path.join(_ROOT, file)
        text = linecache.getline(path, line)
        return any(s in text for s in rule.line_has)
    return True


def _category(frames: list[str]) -> str:
    parsed = [f for f in (_frame(x) for x in frames) if f is not None]
    for func, file, line in reversed(parsed):
        for rule in CATEGORIES:
            if _matches(rule, func, file, line):
                return rule.category
    return "other"


def summarise(paths: list[str]) -> tuple[Counter[str], Counter[str], int]:
    """Samples per category and per leaf frame in Python worker processes, and the samples left out."""
    categories: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    skipped = 0
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            for raw in f:
                stack, _, count = raw.rstrip("\n").rpartition(" ")
                if not stack:
                    continue
                n = int(count)
                frames = stack.split(";")
                processes = [x for x in frames if x.startswith("process ")]
                code = frames[len(processes) :]
                worker = any("daemon" in p or "pyspark.worker" in p for p in processes[1:] or processes)
                leaf = _frame(code[-1]) if code else None
                if (
                    not worker
                    or leaf is None
                    or (leaf[1].endswith(_DAEMON_LOOP[0]) and leaf[0] == _DAEMON_LOOP[1])
                ):
                    skipped += n
                    continue
                categories[_category(code)] += n
                leaves[code[-1]] += n
    return categories, leaves, skipped


def print_summary(paths: list[str], top: int = 15) -> None:
    """Print the per-category shares of the given profiles and the ``top`` leaf frames."""
    categories, leaves, skipped = summarise(paths)
    total = sum(categories.values()) or 1
    print(f"{total} samples in Python workers ({skipped} left out: other processes, daemon accept loop)")
    for name, n in categories.most_common():
        print(f"  {100 * n / total:5.1f}%  {name}")
    print("top leaf frames:")
    for name, n in leaves.most_common(top):
        print(f"  {100 * n / total:5.1f}%  {name}")


def main() -> None:
    """Print the per-category shares of the given profiles."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--top", type=int, default=15, help="leaf frames to list")
    args = parser.parse_args()
    print_summary(args.paths, args.top)


if __name__ == "__main__":
    main()
