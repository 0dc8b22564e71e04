"""Planning cost against the number of splits (issue 17, growth).

Drives the bridge's stream reader on the driver exactly as Spark's micro-batch loop does
(``latestOffset``, then ``partitions``, then ``commit``) without running tasks, for

* ``kafka-unified``: a topic of N partitions on a real Apache Kafka broker
  (``testing/sparkflow_testing/kafka/apache_kafka.py``), one new record per partition before each batch;
* ``files-unified``: N new files per batch (``cleanSource=delete``, so a batch holds N files).

For each N (10, 100, 1,000, 10,000 by default) it prints the median time per batch of
``latestOffset`` and ``partitions`` (wall time, and the driver thread's CPU time, which a loaded
machine inflates less and which leaves out waiting for the broker), the offset JSON size per batch,
and the growth factor of each against the previous N (x10 splits: 10.0 is linear).
Goal: <= 50 ms and linear at 1,000 splits.

    python -m benchmarks.planning_growth [--splits 10,100,1000,10000] [--batches 3]
                                         [--only kafka|files] [--profile N]

``--profile N`` prints the top of a cProfile of one batch at N splits of each source.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import StringType, StructField, StructType

GOAL_MS = 50.0
TOPIC_CREATE_TIMEOUT_S = 300.0
PARTITIONS_PER_REQUEST = 2000


@dataclass
class Row:
    """One source at one split count."""

    source: str
    splits: int
    latest_ms: float
    partitions_ms: float
    offset_bytes: int
    spark_partitions: int
    cpu_ms: float = 0.0

    @property
    def total_ms(self) -> float:
        return self.latest_ms + self.partitions_ms


def drive(reader: Any, batches: int, before_batch: Callable[[int], None], profile: bool = False) -> Row:
    """Run ``batches`` micro-batches on the driver; medians of each step."""
    offset = reader.initialOffset()
    limit = reader.getDefaultReadLimit()
    latest, parts, sizes, counts, cpu = [], [], [], [], []
    profiler = cProfile.Profile() if profile else None
    for b in range(batches):
        before_batch(b)
        if profiler is not None and b == batches - 1:
            profiler.enable()
        c0, t0 = time.thread_time(), time.perf_counter()
        end = reader.latestOffset(offset, limit)
        t1 = time.perf_counter()
        planned = reader.partitions(offset, end)
        t2, c2 = time.perf_counter(), time.thread_time()
        if profiler is not None:
            profiler.disable()
        reader.commit(end)
        latest.append((t1 - t0) * 1000)
        parts.append((t2 - t1) * 1000)
        cpu.append((c2 - c0) * 1000)
        sizes.append(len(json.dumps(end)))
        counts.append(len(planned))
        offset = end
    reader.stop()
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        print(out.getvalue())
    row = Row("", 0, statistics.median(latest), statistics.median(parts), max(sizes), max(counts))
    row.cpu_ms = statistics.median(cpu)
    return row


def files_row(n: int, batches: int, profile: bool) -> Row:
    from connectors.files.datasource import FilesDataSource

    root = tempfile.mkdtemp(prefix="planning-growth-files-")
    try:
        src, stash = os.path.join(root, "in"), os.path.join(root, "stash")
        os.makedirs(src)
        os.makedirs(stash)

        def add(batch: int) -> None:
            one = os.path.join(stash, f"b{batch}.txt")
            with open(one, "w") as f:
                f.write(f"batch {batch}\n")
            for i in range(n):  # hard links: N files in N system calls
                os.link(one, os.path.join(src, f"b{batch:03d}-{i:06d}.txt"))

        options = {"path": src, "format": "text", "continuous": "true", "discoveryIntervalMs": "1"}
        ds = FilesDataSource({**options, "cleanSource": "delete"})
        reader = ds.streamReader(StructType([StructField("value", StringType())]))
        row = drive(reader, batches, add, profile)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    row.source, row.splits = "files", n
    return row


class KafkaRows:
    """One broker for every N; a topic of N partitions per N."""

    def __init__(self) -> None:
        from sparkflow_testing.kafka.apache_kafka import start_apache_kafka

        self.broker = start_apache_kafka()

    def row(self, n: int, batches: int, profile: bool) -> Row | str:
        from confluent_kafka.admin import NewPartitions, NewTopic

        from connectors.kafka.datasource import KafkaDataSource

        topic = f"growth-{n}"
        admin = self.broker.admin()
        t0 = time.monotonic()
        try:  # KRaft refuses more than ~10,000 records in one controller operation: grow in steps
            first = min(n, PARTITIONS_PER_REQUEST)
            admin.create_topics([NewTopic(topic, first, 1)])[topic].result(timeout=TOPIC_CREATE_TIMEOUT_S)
            for total in range(
                first + PARTITIONS_PER_REQUEST, n + PARTITIONS_PER_REQUEST, PARTITIONS_PER_REQUEST
            ):
                grow = [NewPartitions(topic, min(total, n))]
                admin.create_partitions(grow)[topic].result(timeout=TOPIC_CREATE_TIMEOUT_S)
            self.broker.wait_for_partitions(topic, n, timeout_s=TOPIC_CREATE_TIMEOUT_S)
        except Exception as e:  # the broker could not take it: say where it stopped and why
            return f"creating a {n}-partition topic failed after {time.monotonic() - t0:.0f}s: {e}"
        if not self._leaders_ready(topic, n, t0):
            return f"the {n} partitions of a new topic had no leader after {TOPIC_CREATE_TIMEOUT_S:.0f}s"
        created_s = time.monotonic() - t0
        producer = self.broker.producer(**{"linger.ms": 5})

        def produce(_batch: int) -> None:
            for p in range(n):
                producer.produce(topic, b"x", partition=p)
                producer.poll(0)
            producer.flush(60)

        options = {"kafka.bootstrap.servers": self.broker.bootstrap, "subscribe": topic}
        reader = KafkaDataSource(options).streamReader(KafkaDataSource(options).default_schema())
        try:
            row = drive(reader, batches, produce, profile)
        except Exception as e:  # measured: at 10,000 partitions the one-node test broker stops answering
            return f"{n} partitions: the broker stopped answering ({type(e).__name__}: {str(e)[:300]})"
        row.source, row.splits = "kafka", n
        print(f"  (kafka: {n}-partition topic created in {created_s:.1f}s)", flush=True)
        return row

    def _leaders_ready(self, topic: str, n: int, t0: float) -> bool:
        """Wait until every partition answers ListOffsets (leaders are elected after creation)."""
        from confluent_kafka import TopicPartition
        from confluent_kafka.admin import OffsetSpec

        admin = self.broker.admin()
        while time.monotonic() - t0 < TOPIC_CREATE_TIMEOUT_S:
            futures = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.latest() for p in range(n)})
            try:
                for f in futures.values():
                    f.result(timeout=60)
                return True
            except Exception:  # NOT_LEADER_FOR_PARTITION until the controller has elected leaders
                time.sleep(1.0)
        return False

    def stop(self) -> None:
        self.broker.stop()


def report(rows: list[Row]) -> None:
    """The table, with growth factors per x10 splits."""
    print(
        f"{'source':<7}{'splits':>8}{'latestOffset ms':>17}{'partitions ms':>15}{'total ms':>10}"
        f"{'x prev':>8}{'CPU ms':>8}{'x prev':>8}{'offset bytes':>14}{'x prev':>8}{'bytes/split':>13}"
        f"{'Spark parts':>13}"
    )
    prev: dict[str, Row] = {}
    for r in rows:
        p = prev.get(r.source)
        growth_t = f"{r.total_ms / p.total_ms:.1f}" if p else "-"
        growth_b = f"{r.offset_bytes / p.offset_bytes:.1f}" if p else "-"
        growth_c = f"{r.cpu_ms / p.cpu_ms:.1f}" if p and p.cpu_ms else "-"
        print(
            f"{r.source:<7}{r.splits:>8}{r.latest_ms:>17.1f}{r.partitions_ms:>15.1f}{r.total_ms:>10.1f}"
            f"{growth_t:>8}{r.cpu_ms:>8.1f}{growth_c:>8}{r.offset_bytes:>14}{growth_b:>8}"
            f"{r.offset_bytes / r.splits:>13.0f}{r.spark_partitions:>13}"
        )
        prev[r.source] = r
    for r in rows:
        if r.splits == 1000:
            verdict = "meets" if r.total_ms <= GOAL_MS else "misses"
            goal = f"the {GOAL_MS:.0f} ms goal"
            print(f"{r.source}: {r.total_ms:.1f} ms per batch at 1,000 splits {verdict} {goal}")


def main() -> None:
    """Parse arguments, run each source at each N, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", default="10,100,1000,10000")
    parser.add_argument("--batches", type=int, default=3)
    parser.add_argument("--only", choices=["kafka", "files"])
    parser.add_argument("--profile", type=int, default=0, help="profile one batch at this many splits")
    args = parser.parse_args()
    counts = [int(x) for x in args.splits.split(",")]
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    rows: list[Row] = []
    if args.only in (None, "files"):
        for n in counts:
            rows.append(files_row(n, args.batches, args.profile == n))
            print(f"  files {n}: {rows[-1].total_ms:.1f} ms", flush=True)
    notes: list[str] = []
    if args.only in (None, "kafka"):
        kafka = KafkaRows()
        try:
            for n in counts:
                got = kafka.row(n, args.batches, args.profile == n)
                if isinstance(got, str):
                    notes.append(got)
                    print(f"  kafka {n}: {got}", flush=True)
                    break
                rows.append(got)
                print(f"  kafka {n}: {got.total_ms:.1f} ms", flush=True)
        finally:
            kafka.stop()
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    report(rows)
    for note in notes:
        print("stopped:", note)


if __name__ == "__main__":
    main()
