"""Benchmark: a selective ``timestamp`` filter on ``kafka-unified`` with and without filter pushdown.

``--records`` records (default 1,000,000) of ``--size`` bytes (100) over ``--partitions`` partitions
(8) are produced to a real Apache Kafka broker (``--broker``) in 100 equal chunks, a few
milliseconds apart, to a topic with ``message.timestamp.type=LogAppendTime``. The query
``count(*), sum(length(value))`` over the records appended while chunk 50 was produced (1% of the
topic) then runs as a batch read twice in one session:

- without pushdown (``spark.sql.python.filterPushdown.enabled=false``): every record is read and
  Spark filters;
- with pushdown (the conf on and ``filterPushdown=true``): each partition's range starts and ends
  by offsets for times.

Printed: best of ``--rounds`` warm times (after one untimed round each), the records the scan
yielded (``numOutputRows``) and their fraction of the topic (goal for a 1% filter: at most 2%).

    python -m benchmarks.kafka_filter_pushdown
    python -m benchmarks.kafka_filter_pushdown --records 200000
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sparkflow_testing.kafka.brokers import start_broker  # noqa: E402

CHUNKS = 100
CONF = "spark.sql.python.filterPushdown.enabled"


def scanned_rows(df: Any) -> int:
    """``numOutputRows`` of the data source scan of an executed ``df``."""
    found: list[int] = []

    def walk(node: Any) -> None:
        if "BatchScan" in node.nodeName() or "Python" in node.nodeName():
            metrics = node.metrics()
            if metrics.contains("numOutputRows"):
                found.append(int(metrics.apply("numOutputRows").value()))
        for children in (node.children(), node.innerChildren()):
            for i in range(children.size()):
                walk(children.apply(i))

    walk(df._jdf.queryExecution().executedPlan())
    return found[0] if found else -1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--broker", default="apache-kafka")
    args = ap.parse_args()

    from connector_base.spark import local_spark_session

    broker = start_broker(args.broker)
    try:
        topic = broker.create_topic(args.partitions, **{"message.timestamp.type": "LogAppendTime"})
        per_chunk = args.records // CHUNKS
        value = b"x" * args.size
        window: list[float] = []
        started = time.perf_counter()
        for chunk in range(CHUNKS):
            if chunk in (CHUNKS // 2, CHUNKS // 2 + 1):
                time.sleep(0.01)
                window.append(time.time())
                time.sleep(0.01)
            broker.produce(topic, [value] * per_chunk)
        print(f"produced {per_chunk * CHUNKS} records in {time.perf_counter() - started:.1f}s")
        lo, hi = (dt.datetime.fromtimestamp(t, tz=dt.UTC) for t in window)

        # no adaptive execution: its final plan, where the scan's metrics are, is not a plain child
        spark = local_spark_session("kafka-filter-pushdown", cores=2, spark__sql__adaptive__enabled="false")
        spark.sparkContext.setLogLevel("ERROR")

        def query(pushdown: bool) -> tuple[float, int, tuple[int, int]]:
            spark.conf.set(CONF, "true" if pushdown else "false")
            df = (
                spark.read.format("kafka-unified")
                .option("kafka.bootstrap.servers", broker.bootstrap)
                .option("subscribe", topic)
                .option("filterPushdown", "true" if pushdown else "false")
                .load()
            )
            q = df.where((df.timestamp >= lo) & (df.timestamp < hi)).selectExpr(
                "count(*) n", "coalesce(sum(length(value)), 0) b"
            )
            t0 = time.perf_counter()
            row = q.collect()[0]
            return time.perf_counter() - t0, scanned_rows(q), (row["n"], row["b"])

        results = {}
        for pushdown in (False, True):
            query(pushdown)  # warm-up
            runs = [query(pushdown) for _ in range(args.rounds)]
            best = min(r[0] for r in runs)
            assert len({r[2] for r in runs}) == 1
            results[pushdown] = (best, runs[0][1], runs[0][2])
        assert results[False][2] == results[True][2], "pushdown changed the result"
        total = per_chunk * CHUNKS
        matches = results[True][2][0]
        print(f"filter matches {matches} of {total} records ({100 * matches / total:.2f}%)")
        for pushdown in (False, True):
            best, scanned, _ = results[pushdown]
            print(
                f"pushdown={'on ' if pushdown else 'off'}: best {best:.2f}s, scan read {scanned} records "
                f"({100 * scanned / total:.2f}% of the topic)"
            )
        speedup = results[False][0] / results[True][0]
        print(f"speed-up with pushdown: {speedup:.1f}x  (load {os.getloadavg()[0]:.1f})")
        spark.stop()
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
