"""Benchmark: ``kafka-unified`` (both readers) against Spark's own Kafka source and Spark's floor.

What a user's pipeline does, on a real Apache Kafka broker (``--broker``, or ``--bootstrap``):
``--records`` records (default 600,000) of ``--size`` bytes (200) over ``--partitions`` partitions
(6), each with one 3-byte header, in three shapes produced once each:

- ``compressible``: text-like values that compress well, produced lz4-compressed (librdkafka's frames);
- ``random``: incompressible random values, produced uncompressed;
- ``zstd-broker``: the same text-like values sent uncompressed to a topic whose ``compression.type``
  is ``zstd``, so the broker compresses them with Java's zstd: frames like a Java producer's, which
  declare no decompressed size (see docs/kafka.md, "Compressed batches").

Readers: ``spark-kafka`` (Spark's JVM ``format("kafka")``, jars: ``sparkflow_testing.spark.kafka_source``),
``native`` and ``python`` (``kafka-unified`` with ``kafka.reader=native`` / ``python``), and ``floor``
(``benchmarks/spark_floor.py``: a Python source handing Spark pre-built Arrow batches of the same
schema, rows, partitions and value size, with null keys as the produced records have; no I/O).
The query (``--query noop``, the default) reads
every column with ``includeHeaders=true`` and writes it to the ``noop`` sink, so every row and column
is materialised on both sides; ``--query count`` runs the earlier ``count(*), sum(length(value))``
instead, which lets Spark's JVM source skip nothing but lets kafka-unified's Python workers hand over
only what the plan needs (see docs/kafka.md: why the earlier figures and a user's query disagreed).

- cold: the first query of a fresh Spark session, each reader in its own new process (new JVM, new
  Python workers); the session's own start is not counted, the query's planning is. One such query
  is a thin figure (a JIT or a page cache can move it by 20%): ``--cold-rounds`` fresh sessions of
  every reader (3), the readers' order alternating, and the median is compared;
- warm: one session, ``--warmup`` untimed rounds of every reader first, then the best of
  ``--rounds`` rounds in which the readers alternate.

Printed: times, records/s, the median CPU seconds of each warm query by process (Spark's JVM, its
Python workers, the broker when this run started it: ``benchmarks/process_cpu.py``), and the
ratios native / spark-kafka, python / spark-kafka (goal >= 1.5x), floor time / reader time
(goal >= 0.9), cold native / cold spark-kafka (goal >= 1.0x), with the load average beside every
figure (the machine may be shared: compare ratios within one run).

Also printed, per shape: the share of the floor that any reader could reach on this machine. When the
broker runs on Spark's cores, serving the fetches costs CPU the floor never pays; a reader whose
Python workers did no more than the floor's would still take (floor CPU + the broker's extra CPU)
where the floor takes its own CPU, the cores being saturated in both (the printed CPU totals over
the wall times show it). That bound is floor CPU / (floor CPU + broker's extra CPU while the
compiled reader reads), from the medians above. Beside it: what a reader may spend beyond the
floor's work to take 0.9 of the floor's time here (CPU-s per query and ns per record; none when the
bound is below 0.9), against what the compiled reader's Python workers spent beyond the floor's.
And per round, how long Spark's JIT compiler threads were busy: Spark's JVM still compiles during
the warm rounds, on the same cores, whichever query runs (``jit_seconds``).

    python -m benchmarks.kafka_read                          # real Apache Kafka, 600k records per shape
    python -m benchmarks.kafka_read --records 200000 --rounds 2 --no-cold   # quick run
    python -m benchmarks.kafka_read --query count            # the earlier count-and-sum query
    python -m benchmarks.kafka_read --min-partitions 60 --no-cold   # ranges cut into 60 pieces

``--min-partitions N`` sets ``minPartitions`` on both sources (Spark's cuts each partition's range
into pieces the same way) and gives the floor N partitions: the shape of a user who asks for more
tasks than the topic has partitions, where each piece ends before its partition's log does.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.process_cpu import ROLES, ProcessCpu  # noqa: E402
from sparkflow_testing.kafka.broker import KafkaBroker  # noqa: E402
from sparkflow_testing.kafka.brokers import start_broker  # noqa: E402

CONSUME_BATCH = 10_000
READERS = ("spark-kafka", "native", "python")
SHAPES = ("compressible", "random", "zstd-broker")
TOPIC_CONFIG = {"zstd-broker": {"compression.type": "zstd"}}
"""Topic settings per shape (the rest: the broker's defaults)."""
HEADER = [("h", b"abc")]


def loadavg() -> str:
    """The 1-minute load average, for the figure printed next to it."""
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "?"


def produce(
    broker: KafkaBroker, topic: str, records: int, size: int, partitions: int, shape: str = "random"
) -> None:
    """Produce ``records`` values of ``size`` bytes with one header each, round-robin over the partitions.

    ``compressible``: text-like values, lz4-compressed batches; ``random``: random bytes, uncompressed;
    ``zstd-broker``: the text-like values, uncompressed (the topic's ``compression.type`` compresses them).
    """
    producer = broker.producer(
        **{
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
            "compression.type": "lz4" if shape == "compressible" else "none",
        }
    )
    text = (b"sensor=%d status=ok reading=0042.17 unit=celsius site=north-hall-3 " * 8)[: size - 10]
    noise = os.urandom(size * records) if shape == "random" else b""
    for i in range(records):
        value = (b"%010d" % i) + (text if shape != "random" else noise[i * size + 10 : (i + 1) * size])
        while True:
            try:
                producer.produce(topic, value=value, partition=i % partitions, headers=HEADER)
                break
            except BufferError:
                producer.poll(0.05)
        if i % 50_000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("produce did not finish")


def reader_df(spark: Any, reader: str, bootstrap: str, topic: str, min_partitions: int = 0) -> Any:
    """The batch DataFrame of every column of ``topic`` with headers, through ``reader``."""
    df = spark.read.format("kafka" if reader == "spark-kafka" else "kafka-unified")
    if reader != "spark-kafka":
        df = df.option("kafka.reader", reader)
    if min_partitions:
        df = df.option("minPartitions", str(min_partitions))
    return (
        df.option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("includeHeaders", "true")
        .load()
    )


def timed_read(
    spark: Any, reader: str, bootstrap: str, topic: str, query: str, min_partitions: int = 0
) -> float:
    """Seconds for one query (``noop``: every column to the noop sink; ``count``: count and sum)."""
    start = time.perf_counter()
    df = reader_df(spark, reader, bootstrap, topic, min_partitions)
    if query == "noop":
        df.write.format("noop").mode("overwrite").save()
    else:
        df.selectExpr("count(*) as n", "sum(length(value)) as bytes").collect()
    return time.perf_counter() - start


def check_count(
    spark: Any, reader: str, bootstrap: str, topic: str, records: int, min_partitions: int = 0
) -> None:
    """Untimed: ``reader`` sees every record."""
    n = reader_df(spark, reader, bootstrap, topic, min_partitions).count()
    if n != records:
        raise AssertionError(f"{reader} read {n} records of {topic}, expected {records}")


def floor_time(spark: Any, records: int, partitions: int, size: int, query: str) -> float:
    """Seconds for the same query over Spark's floor (pre-built Arrow batches, same schema and rows)."""
    from benchmarks.spark_floor import floor_read
    from connectors.kafka.datasource import kafka_schema

    measure = "" if query == "noop" else "value"
    # ``produce`` sends no keys: the floor's key column is null too, as the readers' is (until
    # 2026-11-29 it held `size` random bytes per row, more than the readers hand Spark)
    return floor_read(
        spark,
        kafka_schema(True),
        records,
        measure,
        partitions=partitions,
        binary_size=size,
        null_columns=("key",),
    )


def attainable(
    floor_rounds: list[dict[str, float]], reader_rounds: list[dict[str, float]], records: int
) -> str:
    """The share of the floor a reader costing nothing beyond the floor's own work could reach here,
    and what a reader may cost to reach the goal's 0.9 of it.

    The floor's CPU (every role, medians) against that plus the broker's extra CPU while
    ``reader_rounds``' reader read (see the module docstring for the reasoning). The budget: with
    the cores saturated, a reader takes 0.9 of the floor's time when its query costs the floor's CPU
    / 0.9; less the floor's own CPU and the broker's extra, that leaves what the reader's fetching,
    decompressing, parsing and building may cost in all, against what the compiled reader's Python
    workers spent beyond the floor's.
    """
    floor_cpu = sum(statistics.median(c[role] for c in floor_rounds) for role in ROLES)
    broker = statistics.median(c["broker"] for c in reader_rounds)
    extra = max(0.0, broker - statistics.median(c["broker"] for c in floor_rounds))
    if floor_cpu <= 0:
        return "no CPU measured for the floor: attainable share unknown"
    budget = floor_cpu / 0.9 - floor_cpu - extra
    spent = statistics.median(c["python-workers"] for c in reader_rounds) - statistics.median(
        c["python-workers"] for c in floor_rounds
    )
    goal = (
        f"a reader at 0.9 of it may spend {budget:.3f} CPU-s per query beyond the floor's work "
        f"({budget / records * 1e9:.0f} ns per record)"
        if budget > 0
        else "no reader reaches 0.9 of it here"
    )
    return (
        f"of Spark's floor attainable here by any reader: {floor_cpu / (floor_cpu + extra):.2f} "
        f"(floor {floor_cpu:.2f} CPU-s per query; the broker's extra {extra:.2f} CPU-s serving the "
        f"compiled reader's fetches on the same cores); {goal}; the compiled reader's Python workers "
        f"spent {spent:.3f} CPU-s ({spent / records * 1e9:.0f} ns per record) beyond the floor's"
    )


def jit_seconds(spark: Any) -> float:
    """Seconds Spark's JVM's JIT compiler threads have spent compiling so far.

    The JVM's own figure (``CompilationMXBean``): elapsed time summed over its compiler threads (two
    here), so it bounds their CPU from above; on saturated cores part of it is time they waited.

    Spark's JVM keeps compiling long after the first queries (here, about 40 methods a second and a
    fifth of a core still after some 80 warm queries): a background cost on the same cores that
    lands on whichever query runs at the time, one reason the same query's wall time moves between
    rounds. Printed per round beside the CPU figures, so a round it slowed shows.
    """
    bean = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getCompilationMXBean()
    return float(bean.getTotalCompilationTime()) / 1000.0


def spark_session(jars: str) -> Any:
    """The benchmark's ``local[2]`` session, with Spark's Kafka source on the classpath."""
    from connector_base.spark import local_spark_session

    spark = local_spark_session("kafka-read-benchmark", cores=2, spark__jars=jars)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def cold_child(spec: dict[str, Any]) -> None:
    """In a fresh process: the session's first query by ``spec['reader']``; prints a JSON line."""
    t0 = time.perf_counter()
    spark = spark_session(spec["jars"])
    session = time.perf_counter() - t0
    args = (spec["reader"], spec["bootstrap"], spec["topic"], spec["query"], spec["min_partitions"])
    first = timed_read(spark, *args)
    second = timed_read(spark, *args)
    spark.stop()
    print(json.dumps({"session": session, "query": first, "second": second}), flush=True)


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
    parser.add_argument("--records", type=int, default=600_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument(
        "--min-partitions", type=int, default=0, help="minPartitions for both sources (0: not set)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds of each reader first")
    parser.add_argument("--query", choices=("noop", "count"), default="noop")
    parser.add_argument("--shapes", default=",".join(SHAPES), help=",".join(SHAPES))
    parser.add_argument("--no-cold", action="store_true", help="skip the cold (first query) runs")
    parser.add_argument("--cold-rounds", type=int, default=3, help="fresh sessions per reader and shape")
    parser.add_argument("--broker", default="apache-kafka", help="kind of broker to start")
    parser.add_argument("--bootstrap", help="use this broker instead of starting one")
    parser.add_argument("--spark-kafka-version", help="spark-sql-kafka-0-10 version (default: see above)")
    parser.add_argument("--cold-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold_child:
        cold_child(json.loads(args.cold_child))
        return

    import pyspark

    from connectors.kafka.reader_choice import native_module
    from sparkflow_testing.spark.kafka_source import served_version, spark_kafka_jars

    if native_module() is None:
        raise SystemExit("the compiled reader is not installed: make native")
    kafka_version = args.spark_kafka_version or served_version()
    jars = ",".join(str(p) for p in spark_kafka_jars(kafka_version))
    print(
        f"Spark {pyspark.__version__}; Spark's Kafka source: spark-sql-kafka-0-10_2.13 {kafka_version}",
        flush=True,
    )
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    broker = KafkaBroker("external", args.bootstrap) if args.bootstrap else start_broker(args.broker)
    try:
        topics: dict[str, str] = {}
        for shape in shapes:
            topics[shape] = broker.create_topic(args.partitions, **TOPIC_CONFIG.get(shape, {}))
            t0 = time.perf_counter()
            produce(broker, topics[shape], args.records, args.size, args.partitions, shape)
            print(
                f"produced {args.records:,} {shape} records of {args.size} B with a header over "
                f"{args.partitions} partitions in {time.perf_counter() - t0:.1f}s "
                f"({broker.kind}; load {loadavg()})",
                flush=True,
            )

        cold: dict[tuple[str, str], list[float]] = {}
        if not args.no_cold:
            for shape in shapes:
                spec = {
                    "bootstrap": broker.bootstrap,
                    "topic": topics[shape],
                    "query": args.query,
                    "min_partitions": args.min_partitions,
                    "jars": jars,
                }
                for r in range(args.cold_rounds):
                    for reader in READERS if r % 2 == 0 else tuple(reversed(READERS)):
                        load = loadavg()
                        figures = cold_read(reader, spec)
                        cold.setdefault((shape, reader), []).append(figures["query"])
                        print(
                            f"cold {shape} {reader} round {r + 1}: first query {figures['query']:.2f}s, "
                            f"then {figures['second']:.2f}s "
                            f"(session start {figures['session']:.2f}s, not counted); load {load}",
                            flush=True,
                        )

        spark = spark_session(jars)
        floor_partitions = max(args.partitions, args.min_partitions)
        warm: dict[tuple[str, str], list[float]] = {}
        cpu: dict[tuple[str, str], list[dict[str, float]]] = {}
        meter = ProcessCpu()

        def measure(shape: str, name: str, query: Callable[[], float]) -> None:
            """One timed warm query: its seconds, and its CPU by role with the JIT's busy time."""
            meter.start()
            jit = jit_seconds(spark)
            warm.setdefault((shape, name), []).append(query())
            cpu.setdefault((shape, name), []).append({**meter.stop(), "jit": jit_seconds(spark) - jit})

        for shape in shapes:
            topic = topics[shape]
            for reader in READERS:
                check_count(spark, reader, broker.bootstrap, topic, args.records, args.min_partitions)
            for _ in range(args.warmup):
                for reader in READERS:
                    timed_read(spark, reader, broker.bootstrap, topic, args.query, args.min_partitions)
                floor_time(spark, args.records, floor_partitions, args.size, args.query)
            for r in range(args.rounds):
                load = loadavg()
                order = READERS if r % 2 == 0 else tuple(reversed(READERS))
                for reader in order:
                    measure(
                        shape,
                        reader,
                        partial(
                            timed_read,
                            spark,
                            reader,
                            broker.bootstrap,
                            topic,
                            args.query,
                            args.min_partitions,
                        ),
                    )
                measure(
                    shape,
                    "floor",
                    partial(floor_time, spark, args.records, floor_partitions, args.size, args.query),
                )
                print(
                    f"warm {shape} round {r + 1}: "
                    + ", ".join(f"{name} {warm[(shape, name)][-1]:.2f}s" for name in (*READERS, "floor"))
                    + f"; load {load}",
                    flush=True,
                )
        spark.stop()

        n = args.records

        def rate(seconds: float) -> str:
            return f"{n / seconds:>11,.0f} records/s ({seconds:6.2f}s)"

        print(f"\nresults ({args.query} query), load now {loadavg()}")
        for shape in shapes:
            best = {name: min(warm[(shape, name)]) for name in (*READERS, "floor")}
            for name in (*READERS, "floor"):
                print(f"  warm {shape:<12} {name:<11} {rate(best[name])}")
            for name in READERS:
                if (shape, name) in cold:
                    rounds_s = ", ".join(f"{t:.2f}" for t in cold[(shape, name)])
                    print(
                        f"  cold {shape:<12} {name:<11} {rate(statistics.median(cold[(shape, name)]))}"
                        f" median of {rounds_s} s"
                    )
            for name in (*READERS, "floor"):
                rounds = cpu[(shape, name)]
                print(
                    f"  cpu  {shape:<12} {name:<11} "
                    + ", ".join(f"{role} {statistics.median(c[role] for c in rounds):.2f}" for role in ROLES)
                    + " CPU-s (median per warm query; Spark's JIT compiler threads busy "
                    + ", ".join(f"{c['jit']:.2f}" for c in rounds)
                    + " s in its rounds)"
                )
            s = best["spark-kafka"]
            for name in ("native", "python"):
                print(
                    f"{shape}: kafka-unified {name} / spark-kafka, warm: {s / best[name]:.2f}x "
                    "(goal >= 1.5x); "
                    f"of Spark's floor: {best['floor'] / best[name]:.2f} (goal >= 0.9)"
                )
                if (shape, name) in cold:
                    ratio = statistics.median(cold[(shape, "spark-kafka")]) / statistics.median(
                        cold[(shape, name)]
                    )
                    print(
                        f"{shape}: kafka-unified {name} / spark-kafka, cold first query (medians): "
                        f"{ratio:.2f}x (goal >= 1.0x)"
                    )
            print(f"{shape}: spark-kafka of Spark's floor: {best['floor'] / s:.2f}")
            print(f"{shape}: {attainable(cpu[(shape, 'floor')], cpu[(shape, 'native')], n)}")
    finally:
        if not args.bootstrap:
            broker.stop()


if __name__ == "__main__":
    main()
