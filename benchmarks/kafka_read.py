"""Benchmark: a bounded read through Spark ``kafka-unified`` against a plain confluent-kafka consumer.

On one broker in one run: ``--records`` records (default 2,000,000) of ``--size`` bytes (100) over
``--partitions`` partitions (8) are read (a) through Spark ``local[2]`` with ``kafka-unified``
(summing the value lengths) and (b) by one confluent-kafka consumer in this process with
``consume(num_messages=...)`` (summing the value lengths). Prints records/s of both and the ratio.
Each side first runs ``--warmup`` untimed rounds (default 2: the first Spark read starts the Python
workers, and the JVM keeps compiling Spark's Arrow-to-row and aggregation paths over the first few
reads, which costs a round up to a third of its time), then ``--rounds`` timed rounds (default 3);
the best timed round counts. Also printed: Spark's own floor for the same query (a source yielding
pre-built Arrow batches of the same schema, ``benchmarks/spark_floor.py``).

    python benchmarks/kafka_read.py                       # embedded noida-db broker
    python benchmarks/kafka_read.py --records 200000      # quick run
    python benchmarks/kafka_read.py --bootstrap host:9092 # an existing broker
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from connectors.testing.kafka_cluster import KafkaBroker, start_noida_db  # noqa: E402

CONSUME_BATCH = 10_000


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
    broker: KafkaBroker, topic: str, partitions: int, records: int, tuned_gc: bool = False
) -> tuple[float, int]:
    """Seconds to read every record with one consumer, and the sum of value lengths.

    ``tuned_gc`` reads with the connector's garbage-collector setting (``bulk_read_gc``), for a
    second, stricter baseline.
    """
    from contextlib import nullcontext

    from confluent_kafka import Consumer, TopicPartition

    from connector_base.gc_tuning import bulk_read_gc

    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": f"bench-{time.time()}",
            "enable.auto.commit": False,
            "receive.message.max.bytes": 1_000_000_000,  # noida-db ignores fetch.max.bytes
            "queued.max.messages.kbytes": 262_144,
        }
    )
    start = time.perf_counter()
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


def spark_read(spark: Any, broker: KafkaBroker, topic: str, records: int) -> tuple[float, int]:
    """Seconds for a bounded ``kafka-unified`` read that sums the value lengths."""
    start = time.perf_counter()
    df = (
        spark.read.format("kafka-unified")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("subscribe", topic)
        .load()
    )
    row = df.selectExpr("count(*) as n", "sum(length(value)) as bytes").collect()[0]
    elapsed = time.perf_counter() - start
    if row["n"] != records:
        raise AssertionError(f"Spark read {row['n']} records, expected {records}")
    return elapsed, int(row["bytes"])


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds of each side first")
    parser.add_argument("--bootstrap", help="use this broker instead of an embedded noida-db")
    args = parser.parse_args()

    broker = KafkaBroker("external", args.bootstrap) if args.bootstrap else start_noida_db()
    try:
        topic = broker.create_topic(args.partitions)
        t0 = time.perf_counter()
        produce(broker, topic, args.records, args.size, args.partitions)
        print(
            f"produced {args.records:,} records of {args.size} B over {args.partitions} partitions "
            f"in {time.perf_counter() - t0:.1f}s ({broker.kind} at {broker.bootstrap})",
            flush=True,
        )

        from connector_base.spark import local_spark_session

        spark = local_spark_session("kafka-read-benchmark", cores=2)
        spark.sparkContext.setLogLevel("ERROR")
        for _ in range(args.warmup):  # Python workers started, the JVM's hot paths compiled
            plain_consumer(broker, topic, args.partitions, args.records)
            spark_read(spark, broker, topic, args.records)

        from benchmarks.spark_floor import floor_read
        from connectors.kafka.datasource import kafka_schema

        floor_args = (spark, kafka_schema(False), args.records, "value")
        floor = min(floor_read(*floor_args, null_columns=("key",)) for _ in range(args.warmup + args.rounds))
        plain: list[float] = []
        plain_tuned: list[float] = []
        via_spark: list[float] = []
        for r in range(args.rounds):
            seconds, plain_bytes = plain_consumer(broker, topic, args.partitions, args.records)
            plain.append(seconds)
            plain_tuned.append(plain_consumer(broker, topic, args.partitions, args.records, True)[0])
            seconds, spark_bytes = spark_read(spark, broker, topic, args.records)
            via_spark.append(seconds)
            assert plain_bytes == spark_bytes, (plain_bytes, spark_bytes)
            print(
                f"round {r + 1}: plain consumer {plain[-1]:.2f}s (with the connector's GC setting "
                f"{plain_tuned[-1]:.2f}s), Spark kafka-unified {via_spark[-1]:.2f}s",
                flush=True,
            )
        plain_rate = args.records / min(plain)
        tuned_rate = args.records / min(plain_tuned)
        spark_rate = args.records / min(via_spark)
        print(f"plain confluent-kafka consumer (1 process): {plain_rate:,.0f} records/s")
        print(f"  the same with the connector's GC setting: {tuned_rate:,.0f} records/s")
        print(f"Spark local[2] kafka-unified:               {spark_rate:,.0f} records/s")
        print(f"ratio Spark / plain: {spark_rate / plain_rate:.2f}x  (target >= 1.0x; < 0.7x is a defect)")
        print(f"ratio Spark / plain with the same GC setting: {spark_rate / tuned_rate:.2f}x")
        print(
            f"Spark's own floor for this query (pre-built Arrow batches of the same schema, no I/O): "
            f"{args.records / floor:,.0f} records/s ({floor:.2f}s; kafka-unified {min(via_spark):.2f}s)"
        )
        spark.stop()
    finally:
        if not args.bootstrap:
            broker.stop()


if __name__ == "__main__":
    main()
