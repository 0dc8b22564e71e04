"""Benchmark: catching up on a Kafka backlog with and without backlog sizing (issue 13).

``--records`` records (default 200,000; the issue's figure is 5,000,000) of ``--size`` bytes over
``--partitions`` partitions are produced once to a real Apache Kafka broker (``--broker``, or
``--bootstrap`` for an existing one). Then ``kafka-unified`` reads them from ``earliest`` with
``Trigger.AvailableNow`` into the ``noop`` sink, twice, each in a fresh checkpoint:

- ``live sizing``: ``maxOffsetsPerTrigger=--live`` (default 10,000) only;
- ``backlog sizing``: the same plus ``backlog.maxRecordsPerTrigger=--backlog`` (default 200,000).

Printed per run: micro-batches, total seconds (from ``start()`` to the end), records/s, and the
files Spark wrote to the checkpoint's offset and commit logs (one of each per micro-batch; these
are the writes, and with an exactly-once sink the transactions, that backlog sizing saves).

    python -m benchmarks.backlog_catchup                      # 200k records
    python -m benchmarks.backlog_catchup --records 5000000    # the issue's size
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.kafka_read import loadavg, produce  # noqa: E402
from sparkflow_testing.kafka.broker import KafkaBroker  # noqa: E402
from sparkflow_testing.kafka.brokers import start_broker  # noqa: E402


def _log_files(checkpoint: str, log: str) -> int:
    path = os.path.join(checkpoint, log)
    return sum(1 for name in os.listdir(path) if name.isdigit()) if os.path.isdir(path) else 0


START_ATTEMPTS = 3
"""A query whose Python stream reader could not start (Spark's 10 s connect-back, on a loaded machine)
is started again, up to this many times; it is no measurement."""


def catch_up(spark: Any, bootstrap: str, topic: str, records: int, options: dict[str, str]) -> dict[str, Any]:
    """One AvailableNow catch-up, started again if its Python stream reader did not start."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return _catch_up(spark, bootstrap, topic, records, options)
        except RuntimeError as e:
            if "failed to connect back" not in str(e) or attempt == START_ATTEMPTS:
                raise
            print(f"  (the stream reader did not start, attempt {attempt}; starting again)", flush=True)
    raise AssertionError("unreachable")


def _catch_up(
    spark: Any, bootstrap: str, topic: str, records: int, options: dict[str, str]
) -> dict[str, Any]:
    """One AvailableNow catch-up: batches, seconds, offset and commit log files."""
    with tempfile.TemporaryDirectory(prefix="bench-backlog-") as checkpoint:
        start = time.perf_counter()
        query = (
            spark.readStream.format("kafka-unified")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .options(**options)
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        with contextlib.suppress(Exception):  # a failed query is reported below, from query.exception()
            query.awaitTermination()
        elapsed = time.perf_counter() - start
        if query.exception() is not None:
            raise RuntimeError(f"the query failed: {query.exception()}")
        progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
        rows = sum(p["numInputRows"] for p in progress)
        result = {
            "batches": len(progress),
            "seconds": elapsed,
            "rows": rows,
            "offset_log": _log_files(checkpoint, "offsets"),
            "commit_log": _log_files(checkpoint, "commits"),
            "sizes": [p["numInputRows"] for p in progress],
        }
    if rows != records:
        raise AssertionError(f"read {rows} records, expected {records}")
    return result


def main() -> None:
    """Produce once, then catch up with live sizing and with backlog sizing; print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--live", type=int, default=10_000, help="maxOffsetsPerTrigger")
    parser.add_argument("--backlog", type=int, default=200_000, help="backlog.maxRecordsPerTrigger")
    parser.add_argument("--broker", default="apache-kafka", help="kind of broker to start")
    parser.add_argument("--bootstrap", help="use this broker instead of starting one")
    args = parser.parse_args()

    from connector_base.spark import local_spark_session

    broker = KafkaBroker("external", args.bootstrap) if args.bootstrap else start_broker(args.broker)
    spark = None
    try:
        topic = broker.create_topic(args.partitions)
        t0 = time.perf_counter()
        produce(broker, topic, args.records, args.size, args.partitions)
        took = time.perf_counter() - t0
        print(f"produced {args.records} records of {args.size} B in {took:.1f} s", flush=True)
        spark = local_spark_session("backlog-catchup-benchmark", cores=2)
        spark.sparkContext.setLogLevel("ERROR")
        live = {"maxOffsetsPerTrigger": str(args.live)}
        runs = {
            "live sizing": live,
            "backlog sizing": {**live, "backlog.maxRecordsPerTrigger": str(max(args.backlog, args.live))},
        }
        catch_up(spark, broker.bootstrap, topic, args.records, live)  # untimed warm-up of JVM and workers
        results = {}
        for name, options in runs.items():
            r = catch_up(spark, broker.bootstrap, topic, args.records, options)
            results[name] = r
            print(
                f"{name:15s} {r['batches']:5d} batches  {r['seconds']:7.1f} s  "
                f"{args.records / r['seconds']:9.0f} records/s  offset log {r['offset_log']:5d} files  "
                f"commit log {r['commit_log']:5d} files  (load {loadavg()})",
                flush=True,
            )
        a, b = results["live sizing"], results["backlog sizing"]
        print(
            f"backlog sizing: {a['batches'] / max(1, b['batches']):.1f}x fewer batches, "
            f"{a['seconds'] / b['seconds']:.2f}x faster, "
            f"{a['offset_log'] - b['offset_log']} fewer offset log writes"
        )
    finally:
        if spark is not None:
            spark.stop()
        if not args.bootstrap:
            broker.stop()


if __name__ == "__main__":
    main()
