"""Benchmark: kafka-unified's sink against Spark's own Kafka sink, in one run on a real broker.

A DataFrame of ``--records`` rows (default 600,000): ``key`` (10 bytes), ``value`` (``--size``
bytes, 200, text-like), ``headers`` (one 3-byte header; ``--no-headers`` leaves the column out),
built by Spark from ``range`` and cached, is written with ``df.write`` to a new topic of
``--partitions`` partitions (6) by Spark's JVM ``format("kafka")`` and by ``format("kafka-unified")``
with each producing path (``kafka.writer=native``, the compiled one, and ``=python``), in turn,
``--warmup`` untimed rounds then ``--rounds`` timed ones. ``--compression`` (none, lz4, zstd, ...)
is every producer's ``compression.type``. Every write is checked: the topic's end offsets add up to
the rows written. ``floor`` drops the batches in a Python Arrow writer: Spark's cost of handing the
rows to any Python sink. Printed: times, records/s and each kafka-unified path / spark-kafka (goal
>= 1.0x).

    python -m benchmarks.kafka_sink
    python -m benchmarks.kafka_sink --records 200000 --rounds 2 --warmup 1
    python -m benchmarks.kafka_sink --records 200000 --no-headers --compression lz4
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, DataSourceWriter, WriterCommitMessage

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.kafka_read import loadavg, spark_session  # noqa: E402
from sparkflow_testing.kafka.broker import KafkaBroker  # noqa: E402
from sparkflow_testing.kafka.brokers import start_broker  # noqa: E402

WRITERS = ("spark-kafka", "native", "python", "floor")
"""Spark's JVM sink, kafka-unified with ``kafka.writer=native`` and ``=python``, and the floor: a Python
Arrow writer that drops the batches (what Spark's hand-off to any Python sink costs, no Kafka)."""


class _DropWriter(DataSourceArrowWriter):
    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        for _ in iterator:
            pass
        return WriterCommitMessage()


class DropSink(DataSource):
    """The floor: every batch handed to a Python Arrow writer, and dropped."""

    @classmethod
    def name(cls) -> str:
        return "drop-arrow"

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _DropWriter()


def frame(spark: Any, records: int, size: int, headers: bool) -> Any:
    """The rows to write, cached and counted once so every writer starts from memory."""
    filler = "x" * max(0, size - 40)
    columns = [
        "cast(lpad(cast(id as string), 10, '0') as binary) as key",
        f"cast(concat('sensor=', cast(id % 97 as string), ' status=ok reading=42.17 ', '{filler}') as binary)"
        " as value",
    ]
    if headers:
        columns.append("array(named_struct('key', 'h', 'value', cast('abc' as binary))) as headers")
    df = spark.range(records).selectExpr(*columns)
    df = df.cache()
    df.count()
    return df


def timed_write(
    df: Any, writer: str, bootstrap: str, topic: str, compression: str, extra: dict[str, str]
) -> float:
    """Seconds for one ``df.write`` of every row to ``topic``."""
    formats = {"spark-kafka": "kafka", "floor": DropSink.name()}
    w = df.write.format(formats.get(writer, "kafka-unified"))
    if writer in ("native", "python"):
        w = w.option("kafka.writer", writer).options(**extra)
    start = time.perf_counter()
    (
        w.option("kafka.bootstrap.servers", bootstrap)
        .option("kafka.compression.type", compression)
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
    parser.add_argument("--no-headers", action="store_true", help="leave the headers column out")
    parser.add_argument("--compression", default="none", help="compression.type of every producer")
    parser.add_argument("--writers", default=",".join(WRITERS), help="a comma-separated subset of WRITERS")
    parser.add_argument(
        "--kafka-option", action="append", default=[], help="NAME=VALUE: a kafka.* option of our writes"
    )
    parser.add_argument("--broker", default="apache-kafka")
    parser.add_argument("--bootstrap")
    args = parser.parse_args()

    from sparkflow_testing.spark.kafka_source import served_version, spark_kafka_jars

    jars = ",".join(str(p) for p in spark_kafka_jars(served_version()))
    broker = KafkaBroker("external", args.bootstrap) if args.bootstrap else start_broker(args.broker)
    try:
        spark = spark_session(jars)
        spark.dataSource.register(DropSink)
        df = frame(spark, args.records, args.size, not args.no_headers)
        writers = tuple(w for w in WRITERS if w in args.writers.split(","))
        times: dict[str, list[float]] = {w: [] for w in writers}
        print(f"{args.records} records, headers {not args.no_headers}, compression {args.compression}")
        for r in range(args.warmup + args.rounds):
            load = loadavg()
            order = writers if r % 2 == 0 else tuple(reversed(writers))
            line = []
            for writer in order:
                topic = broker.create_topic(args.partitions)
                extra = dict(o.split("=", 1) for o in args.kafka_option)
                seconds = timed_write(df, writer, broker.bootstrap, topic, args.compression, extra)
                written = sum(broker.end_offsets(topic).values()) if writer != "floor" else args.records
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
        for w in writers:
            print(f"  {w:<14} {args.records / best[w]:>11,.0f} records/s ({best[w]:.2f}s)")
        for w in writers:
            if w in ("native", "python") and "spark-kafka" in best:
                ratio = best["spark-kafka"] / best[w]
                print(f"kafka-unified ({w}) / spark-kafka sink: {ratio:.2f}x (goal >= 1.0x)")
    finally:
        if not args.bootstrap:
            broker.stop()


if __name__ == "__main__":
    main()
