"""Benchmark: ``kafka-unified`` against Spark's own Kafka source and a plain consumer, on one broker.

``--records`` records (default 2,000,000) of ``--size`` bytes (100) over ``--partitions`` partitions
(8) are produced once to a real Apache Kafka broker (``--broker``, default ``apache-kafka``; any kind
of ``sparkflow_testing.kafka.brokers.start_broker``, or ``--bootstrap`` for an existing broker) and
then read by three readers:

- ``spark-kafka``: Spark's built-in ``format("kafka")`` (spark-sql-kafka-0-10, jars resolved by
  ``sparkflow_testing.spark.kafka_source``: the installed Spark's version if Maven Central serves it, else
  the newest that is, on the installed Spark; ``--spark-kafka-version`` picks one);
- ``kafka-unified``: this project's source;
- ``plain``: one confluent-kafka consumer in one Python process (``consume(num_messages=...)``).

Each Spark reader runs ``count(*), sum(length(value))`` as a bounded batch query:

- cold: the first query in a fresh Spark session, each reader in its own new process (new JVM, new
  Python workers), so no reader profits from another's start-up; the session's own start is not
  counted, the query's planning is;
- warm: in one session, ``--warmup`` untimed rounds of every reader first (the JVM compiles Spark's
  hot paths over the first reads), then the best of ``--rounds`` interleaved timed rounds;
- streaming: ``readStream`` from ``earliest`` with ``maxOffsetsPerTrigger`` (default: a quarter of
  the records), ``Trigger.AvailableNow`` into the ``noop`` sink, timed from ``start()`` to the end.

Printed: every time, records/s, the ratios kafka-unified / spark-kafka (warm, cold, streaming),
cold / warm time of each reader (goal: at most 1.5), each against the plain consumer, and against
Spark's floor for the same query (``benchmarks/spark_floor.py``: a Python source yielding pre-built
Arrow batches, no I/O). The load average is printed with every figure: the machine may be shared.

    python -m benchmarks.kafka_read                          # real Apache Kafka, 2M records
    python -m benchmarks.kafka_read --records 200000         # quick run
    python -m benchmarks.kafka_read --broker noida-db        # a stand-in broker
    python -m benchmarks.kafka_read --bootstrap host:9092    # an existing broker
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sparkflow_testing.kafka.broker import KafkaBroker  # noqa: E402
from sparkflow_testing.kafka.brokers import start_broker  # noqa: E402

CONSUME_BATCH = 10_000
SPARK_READERS = ("spark-kafka", "kafka-unified")
FORMATS = {"spark-kafka": "kafka", "kafka-unified": "kafka-unified"}


def loadavg() -> str:
    """The 1-minute load average, for the figure printed next to it."""
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "?"


def produce(broker: KafkaBroker, topic: str, records: int, size: int, partitions: int) -> None:
    """Produce ``records`` distinct values of ``size`` bytes, round-robin over the partitions."""
    producer = broker.producer(
        **{
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
            "compression.type": "none",
        }
    )
    pad = os.urandom(size)
    for i in range(records):
        value = (b"%010d" % i) + pad[10:]
        while True:
            try:
                producer.produce(topic, value=value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 50_000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("produce did not finish")


def plain_consumer(
    bootstrap: str, topic: str, partitions: int, records: int, tuned_gc: bool = False
) -> tuple[float, int]:
    """Seconds to read every record with one consumer, and the sum of value lengths.

    ``tuned_gc`` reads with the connector's garbage-collector setting (``bulk_read_gc``), for a
    second, stricter baseline.
    """
    from confluent_kafka import Consumer, TopicPartition

    from connector_base.gc_tuning import bulk_read_gc

    start = time.perf_counter()
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{time.time()}",
            "enable.auto.commit": False,
            "receive.message.max.bytes": 1_000_000_000,  # noida-db ignores fetch.max.bytes
            "queued.max.messages.kbytes": 262_144,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen = 0
    total = 0
    deadline = time.monotonic() + 600
    with bulk_read_gc() if tuned_gc else nullcontext():
        while seen < records:
            if time.monotonic() > deadline:
                raise TimeoutError(f"plain consumer read {seen} of {records} records")
            for m in consumer.consume(num_messages=CONSUME_BATCH, timeout=1.0):
                if m.error() is None:
                    seen += 1
                    total += len(m.value())
                elif m.error().fatal() or not m.error().retriable():
                    raise RuntimeError(f"plain consumer: {m.error()}")
    elapsed = time.perf_counter() - start
    consumer.close()
    return elapsed, total


def batch_read(spark: Any, reader: str, bootstrap: str, topic: str, records: int) -> tuple[float, int]:
    """Seconds for a bounded read through ``reader`` that counts and sums the value lengths."""
    start = time.perf_counter()
    df = (
        spark.read.format(FORMATS[reader])
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .load()
    )
    row = df.selectExpr("count(*) as n", "sum(length(value)) as bytes").collect()[0]
    elapsed = time.perf_counter() - start
    if row["n"] != records:
        raise AssertionError(f"{reader} read {row['n']} records, expected {records}")
    return elapsed, int(row["bytes"])


def stream_read(
    spark: Any, reader: str, bootstrap: str, topic: str, records: int, per_trigger: int
) -> tuple[float, int]:
    """Seconds for an AvailableNow streaming read of the whole topic, and the number of micro-batches."""
    with tempfile.TemporaryDirectory(prefix="bench-ckpt-") as checkpoint:
        start = time.perf_counter()
        query = (
            spark.readStream.format(FORMATS[reader])
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", str(per_trigger))
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        elapsed = time.perf_counter() - start
        progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
        rows = sum(p["numInputRows"] for p in progress)
    if rows != records:
        raise AssertionError(f"{reader} streamed {rows} records, expected {records}")
    return elapsed, len(progress)


def spark_session(jars: str) -> Any:
    """The benchmark's ``local[2]`` session, with Spark's Kafka source on the classpath."""
    from connector_base.spark import local_spark_session

    spark = local_spark_session("kafka-read-benchmark", cores=2, spark__jars=jars)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def cold_child(spec: dict[str, Any]) -> None:
    """In a fresh process: one cold read by ``spec['reader']``; prints a JSON line with the times."""
    args = (spec["bootstrap"], spec["topic"])
    if spec["reader"] == "plain":
        seconds, total = plain_consumer(*args, spec["partitions"], spec["records"])
        print(json.dumps({"query": seconds, "bytes": total}), flush=True)
        return
    t0 = time.perf_counter()
    spark = spark_session(spec["jars"])
    session = time.perf_counter() - t0
    seconds, total = batch_read(spark, spec["reader"], *args, spec["records"])
    second, _ = batch_read(spark, spec["reader"], *args, spec["records"])
    spark.stop()
    print(json.dumps({"session": session, "query": seconds, "second": second, "bytes": total}), flush=True)


def cold_read(reader: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Run ``cold_child`` for ``reader`` in a new interpreter and return its figures."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.kafka_read",
            "--cold-child",
            json.dumps({**spec, "reader": reader}),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"cold read by {reader} failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(lines[-1]))


def main() -> None:  # noqa: C901 - one straight sequence of measurements
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds of each reader first")
    parser.add_argument("--max-offsets-per-trigger", type=int, help="streaming budget (default records/4)")
    parser.add_argument("--broker", default="apache-kafka", help="kind of broker to start")
    parser.add_argument("--bootstrap", help="use this broker instead of starting one")
    parser.add_argument("--spark-kafka-version", help="spark-sql-kafka-0-10 version (default: see above)")
    parser.add_argument("--cold-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold_child:
        cold_child(json.loads(args.cold_child))
        return

    import pyspark

    from sparkflow_testing.spark.kafka_source import served_version, spark_kafka_jars

    kafka_version = args.spark_kafka_version or served_version()
    jars = ",".join(str(p) for p in spark_kafka_jars(kafka_version))
    print(
        f"Spark {pyspark.__version__}; Spark's Kafka source: spark-sql-kafka-0-10_2.13 {kafka_version}",
        flush=True,
    )
    if kafka_version != pyspark.__version__:
        print(
            f"  ({pyspark.__version__}'s Kafka module is not on Maven Central; {kafka_version}'s runs on it)"
        )

    broker = KafkaBroker("external", args.bootstrap) if args.bootstrap else start_broker(args.broker)
    try:
        topic = broker.create_topic(args.partitions)
        t0 = time.perf_counter()
        produce(broker, topic, args.records, args.size, args.partitions)
        print(
            f"produced {args.records:,} records of {args.size} B over {args.partitions} partitions "
            f"in {time.perf_counter() - t0:.1f}s ({broker.kind} at {broker.bootstrap}; load {loadavg()})",
            flush=True,
        )
        spec = {
            "bootstrap": broker.bootstrap,
            "topic": topic,
            "records": args.records,
            "partitions": args.partitions,
            "jars": jars,
        }

        cold: dict[str, float] = {}
        for reader in (*SPARK_READERS, "plain"):
            load = loadavg()
            figures = cold_read(reader, spec)
            cold[reader] = figures["query"]
            extra = (
                f" (session start {figures['session']:.2f}s, not counted; then {figures['second']:.2f}s)"
                if "session" in figures
                else ""
            )
            print(f"cold {reader}: {figures['query']:.2f}s{extra}; load {load}", flush=True)

        spark = spark_session(jars)
        read_args = (broker.bootstrap, topic, args.records)
        for _ in range(args.warmup):
            plain_consumer(broker.bootstrap, topic, args.partitions, args.records)
            for reader in SPARK_READERS:
                batch_read(spark, reader, *read_args)

        from benchmarks.spark_floor import floor_read
        from connectors.kafka.datasource import kafka_schema

        floor_args = (spark, kafka_schema(False), args.records, "value")
        floor = min(floor_read(*floor_args, null_columns=("key",)) for _ in range(args.warmup + args.rounds))
        warm: dict[str, list[float]] = {name: [] for name in (*SPARK_READERS, "plain", "plain-gc")}
        for r in range(args.rounds):
            load = loadavg()
            seconds, plain_bytes = plain_consumer(broker.bootstrap, topic, args.partitions, args.records)
            warm["plain"].append(seconds)
            warm["plain-gc"].append(
                plain_consumer(broker.bootstrap, topic, args.partitions, args.records, True)[0]
            )
            for reader in SPARK_READERS:
                seconds, spark_bytes = batch_read(spark, reader, *read_args)
                warm[reader].append(seconds)
                assert plain_bytes == spark_bytes, (reader, plain_bytes, spark_bytes)
            print(
                f"warm round {r + 1}: "
                + ", ".join(f"{name} {times[-1]:.2f}s" for name, times in warm.items())
                + f"; load {load}",
                flush=True,
            )

        per_trigger = args.max_offsets_per_trigger or max(1, args.records // 4)
        streaming: dict[str, float] = {}
        for reader in SPARK_READERS:
            load = loadavg()
            seconds, batches = stream_read(spark, reader, *read_args, per_trigger)
            streaming[reader] = seconds
            print(
                f"streaming {reader}: AvailableNow, maxOffsetsPerTrigger {per_trigger:,}: {seconds:.2f}s "
                f"in {batches} micro-batches; load {load}",
                flush=True,
            )
        spark.stop()

        best = {name: min(times) for name, times in warm.items()}
        n = args.records

        def rate(seconds: float) -> str:
            return f"{n / seconds:>12,.0f} records/s ({seconds:6.2f}s)"

        print(f"\nresults, load now {loadavg()} (a ratio > 1x means kafka-unified is faster)")
        for name in (*SPARK_READERS, "plain"):
            print(f"  warm {name:<14} {rate(best[name])}")
        print(f"  warm plain, connector's GC {rate(best['plain-gc'])}")
        for name in (*SPARK_READERS, "plain"):
            print(f"  cold {name:<14} {rate(cold[name])}")
        for name in SPARK_READERS:
            print(f"  stream {name:<12} {rate(streaming[name])}")
        print(f"  Spark's floor       {rate(floor)}")
        u, s = "kafka-unified", "spark-kafka"
        print(f"kafka-unified / spark-kafka, warm:      {best[s] / best[u]:.2f}x  (goal >= 1.0x)")
        print(f"kafka-unified / spark-kafka, cold:      {cold[s] / cold[u]:.2f}x")
        print(f"kafka-unified / spark-kafka, streaming: {streaming[s] / streaming[u]:.2f}x")
        for name in (*SPARK_READERS, "plain"):
            print(f"cold / warm time, {name}: {cold[name] / best[name]:.2f}  (goal <= 1.5)")
        for name in SPARK_READERS:
            print(
                f"{name} / plain consumer: {best['plain'] / best[name]:.2f}x "
                f"(GC-matched {best['plain-gc'] / best[name]:.2f}x); / floor: {floor / best[name]:.2f}"
            )
    finally:
        if not args.bootstrap:
            broker.stop()


if __name__ == "__main__":
    main()
