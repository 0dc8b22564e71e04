"""Benchmark: kafka-unified's sink against Spark's own Kafka sink, in one run on a real broker.

A DataFrame of ``--records`` rows (default 600,000): ``key`` (10 bytes), ``value`` (``--size``
bytes, 200, text-like), ``headers`` (one 3-byte header), built by Spark from ``range`` and cached, is
written with ``df.write`` to a new topic of ``--partitions`` partitions (6) by Spark's JVM
``format("kafka")`` and by ``format("kafka-unified")``, alternating, ``--warmup`` untimed rounds
then ``--rounds`` timed ones. Every write is checked: the topic's end offsets add up to the rows
written. Printed: times, records/s and kafka-unified / spark-kafka (goal >= 1.0x).

    python -m benchmarks.kafka_sink
    python -m benchmarks.kafka_sink --records 200000 --rounds 2
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.kafka_read import loadavg, spark_session  # noqa: E402
from sparkflow_testing.kafka.broker import KafkaBroker  # noqa: E402
from sparkflow_testing.kafka.brokers import start_broker  # noqa: E402

WRITERS = ("spark-kafka", "kafka-unified")


def frame(spark: Any, records: int, size: int) -> Any:
    """The rows to write, cached and counted once so every writer starts from memory."""
    filler = "x" * max(0, size - 40)
    df = spark.range(records).selectExpr(
        "cast(lpad(cast(id as string), 10, '0') as binary) as key",
        f"cast(concat('sensor=', cast(id % 97 as string), ' status=ok reading=42.17 ', '{filler}') as binary)"
        " as value",
        "array(named_struct('key', 'h', 'value', cast('abc' as binary))) as headers",
    )
    df = df.cache()
    df.count()
    return df


def timed_write(df: Any, writer: str, bootstrap: str, topic: str) -> float:
    """Seconds for one ``df.write`` of every row to ``topic``."""
    start = time.perf_counter()
    (
        df.write.format("kafka" if writer == "spark-kafka" else "kafka-unified")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", topic)
        .mode("append")
        .save()
    )
    return time.perf_counter() - start


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=600_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--broker", default="apache-kafka")
    parser.add_argument("--bootstrap")
    args = parser.parse_args()

    from sparkflow_testing.spark.kafka_source import served_version, spark_kafka_jars

    jars = ",".join(str(p) for p in spark_kafka_jars(served_version()))
    broker = KafkaBroker("external", args.bootstrap) if args.bootstrap else start_broker(args.broker)
    try:
        spark = spark_session(jars)
        df = frame(spark, args.records, args.size)
        times: dict[str, list[float]] = {w: [] for w in WRITERS}
        for r in range(args.warmup + args.rounds):
            load = loadavg()
            order = WRITERS if r % 2 == 0 else tuple(reversed(WRITERS))
            line = []
            for writer in order:
                topic = broker.create_topic(args.partitions)
                seconds = timed_write(df, writer, broker.bootstrap, topic)
                written = sum(broker.end_offsets(topic).values())
                if written != args.records:
                    raise AssertionError(f"{writer} wrote {written} records, expected {args.records}")
                if r >= args.warmup:
                    times[writer].append(seconds)
                line.append(f"{writer} {seconds:.2f}s")
            kind = "warm-up" if r < args.warmup else f"round {r - args.warmup + 1}"
            print(f"{kind}: {', '.join(line)}; load {load}", flush=True)
        spark.stop()
        best = {w: min(t) for w, t in times.items()}
        print(f"\nresults, load now {loadavg()}")
        for w in WRITERS:
            print(f"  {w:<14} {args.records / best[w]:>11,.0f} records/s ({best[w]:.2f}s)")
        ratio = best["spark-kafka"] / best["kafka-unified"]
        print(f"kafka-unified / spark-kafka sink: {ratio:.2f}x (goal >= 1.0x)")
    finally:
        if not args.bootstrap:
            broker.stop()


if __name__ == "__main__":
    main()
