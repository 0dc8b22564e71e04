"""Benchmark: end-to-end latency of a streaming query, kafka-unified against Spark's own Kafka source.

A producer thread writes a steady ``--rate`` records/s (default 20,000) of ``--size`` bytes (200)
with one header each to a real Apache Kafka topic of ``--partitions`` partitions (6); each record's
CreateTime is the moment it was handed to the producer. Streaming queries read the topic from
``latest`` with a processing-time trigger of 0 (a new micro-batch as soon as the last one ends),
every column with headers, into ``foreachBatch``, which collects every column of the batch (the
key's, value's and headers' sizes, the rest as they are) and stamps the time the batch was done: a
record's latency is that time minus its CreateTime (produce to sink). Readers run one after another
on the same stream for ``--seconds`` each (the first ``--settle`` seconds of each are not counted),
in the order spark-kafka, native, python, then reversed, and so on for ``--rounds`` rounds (2), in
one Spark session, after one untimed ``--warmup`` query per reader (without it the first reader
measured carried the session's JIT and start-up: Spark's source once showed a p99 of 9.6 s in its
first round against 0.68 s in its second). Printed: p50, p99 and max latency, records/s seen, per
reader and round, the median duration of each phase of a micro-batch from Spark's query progress
(where a reader's time goes), and the ratios of the p99s, over every round's records and by the
median of the rounds' p99s (the latter is steadier: one slow round moves it less; goal:
kafka-unified's p99 no worse than Spark's source's).

    python -m benchmarks.kafka_latency
    python -m benchmarks.kafka_latency --rate 5000 --seconds 20 --readers spark-kafka,native
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.kafka_read import HEADER, loadavg, spark_session  # noqa: E402
from sparkflow_testing.kafka.broker import KafkaBroker  # noqa: E402
from sparkflow_testing.kafka.brokers import start_broker  # noqa: E402


class SteadyProducer(threading.Thread):
    """Produces ``rate`` records/s in 10 ms slices until stopped; CreateTime = hand-over time."""

    def __init__(self, broker: KafkaBroker, topic: str, rate: int, size: int, partitions: int) -> None:
        super().__init__(daemon=True)
        self.producer = broker.producer(**{"linger.ms": 1, "compression.type": "lz4"})
        self.topic, self.rate, self.partitions = topic, rate, partitions
        self.value = (b"sensor=1 status=ok reading=0042.17 unit=celsius " * 8)[:size]
        self.stopped = threading.Event()
        self.sent = 0

    def run(self) -> None:
        start = time.monotonic()
        while not self.stopped.is_set():
            due = int((time.monotonic() - start) * self.rate)
            while self.sent < due:
                try:
                    self.producer.produce(
                        self.topic, value=self.value, partition=self.sent % self.partitions, headers=HEADER
                    )
                    self.sent += 1
                except BufferError:
                    self.producer.poll(0.01)
            self.producer.poll(0)
            time.sleep(0.01)
        self.producer.flush(30)


PHASES = ("latestOffset", "queryPlanning", "getBatch", "addBatch", "walCommit", "commitOffsets")
"""The parts of a micro-batch's ``durationMs`` in Spark's query progress, in the order they run."""


def phase_medians(progress: list[dict[str, Any]], settle_ms: float) -> dict[str, float]:
    """Median milliseconds per phase over the micro-batches that read records after the settle time.

    ``addBatch`` includes the read tasks and the sink; ``triggerExecution`` is the whole micro-batch;
    ``between`` is the gap from one micro-batch's end to the next one's start (the trigger's wait).
    """
    batches = [p for p in progress if p.get("numInputRows", 0) > 0]
    if not batches:
        return {}
    first = _epoch_ms(batches[0]["timestamp"])
    batches = [p for p in batches if _epoch_ms(p["timestamp"]) - first >= settle_ms] or batches
    medians = {
        phase: float(np.median([p["durationMs"].get(phase, 0) for p in batches]))
        for phase in (*PHASES, "triggerExecution")
    }
    starts = [_epoch_ms(p["timestamp"]) for p in batches]
    ends = [s + p["durationMs"].get("triggerExecution", 0) for s, p in zip(starts, batches, strict=True)]
    gaps = [b - e for e, b in zip(ends, starts[1:], strict=False)]
    medians["between"] = float(np.median(gaps)) if gaps else 0.0
    medians["rows"] = float(np.median([p["numInputRows"] for p in batches]))
    return medians


def _epoch_ms(stamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000.0


def format_phases(medians: dict[str, float]) -> str:
    """One line: the median milliseconds of each phase, and the rows of a median micro-batch."""
    parts = [f"{name} {medians[name]:.0f}" for name in (*PHASES, "triggerExecution", "between")]
    return ", ".join(parts) + f" ms; {medians['rows']:.0f} rows per batch"


def measure(
    spark: Any, reader: str, bootstrap: str, topic: str, seconds: float, settle: float
) -> tuple[np.ndarray, dict[str, float]]:
    """Latencies (ms) of the records a query through ``reader`` delivered after ``settle`` seconds,
    and the median duration of each phase of its micro-batches (``phase_medians``)."""
    latencies: list[np.ndarray] = []
    started = time.time()

    def sink(batch: Any, _batch_id: int) -> None:
        # every column reaches the sink, as in a user's pipeline: a sink needing the timestamp only
        # would let kafka-unified's Arrow path hand over one column while Spark's source builds rows
        micros = (
            batch.selectExpr(
                "unix_micros(timestamp) as us",
                "length(key) as key_bytes",
                "length(value) as value_bytes",
                "size(headers) as headers",
                "topic",
                "partition",
                "offset",
                "timestampType",
            )
            .toPandas()["us"]
            .to_numpy()
        )
        done = time.time()
        if done - started >= settle and len(micros):
            latencies.append(done * 1000.0 - micros / 1000.0)

    df = spark.readStream.format("kafka" if reader == "spark-kafka" else "kafka-unified")
    if reader != "spark-kafka":
        df = df.option("kafka.reader", reader)
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as checkpoint:
        query = (
            df.option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "latest")
            .option("includeHeaders", "true")
            .load()
            .writeStream.foreachBatch(sink)
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="0 seconds")
            .start()
        )
        time.sleep(settle + seconds)
        progress = [json.loads(p.json) for p in query.recentProgress]
        query.stop()
    return np.concatenate(latencies) if latencies else np.array([]), phase_medians(progress, settle * 1000)


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rate", type=int, default=20_000)
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--settle", type=float, default=10.0)
    parser.add_argument("--readers", default="spark-kafka,native,python")
    parser.add_argument(
        "--warmup", type=float, default=20.0, help="seconds of one untimed query per reader first"
    )
    parser.add_argument(
        "--rounds", type=int, default=2, help="rounds of every reader, the order reversed each round"
    )
    parser.add_argument("--broker", default="apache-kafka")
    parser.add_argument("--bootstrap")
    args = parser.parse_args()

    from sparkflow_testing.spark.kafka_source import served_version, spark_kafka_jars

    readers = [r.strip() for r in args.readers.split(",") if r.strip()]
    jars = ",".join(str(p) for p in spark_kafka_jars(served_version()))
    broker = KafkaBroker("external", args.bootstrap) if args.bootstrap else start_broker(args.broker)
    producer = None
    try:
        topic = broker.create_topic(args.partitions)
        producer = SteadyProducer(broker, topic, args.rate, args.size, args.partitions)
        producer.start()
        spark = spark_session(jars)
        results: dict[str, list[np.ndarray]] = {r: [] for r in readers}
        for reader in readers:  # the first query of a session pays the JIT, the workers and the pools
            measure(spark, reader, broker.bootstrap, topic, 0.0, args.warmup)
            print(f"{reader}: warm-up of {args.warmup:.0f} s, not counted; load {loadavg()}", flush=True)
        orders = [readers if r % 2 == 0 else list(reversed(readers)) for r in range(args.rounds)]
        for round_readers in orders:
            for reader in round_readers:
                load = loadavg()
                lat, phases = measure(spark, reader, broker.bootstrap, topic, args.seconds, args.settle)
                results[reader].append(lat)
                if len(lat):
                    print(
                        f"{reader}: {len(lat) / args.seconds:,.0f} records/s, "
                        f"p50 {np.percentile(lat, 50):.0f} ms, p99 {np.percentile(lat, 99):.0f} ms, "
                        f"max {lat.max():.0f} ms; load {load}",
                        flush=True,
                    )
                    if phases:
                        print(f"  {reader} micro-batch medians: {format_phases(phases)}", flush=True)
                else:
                    print(f"{reader}: no records after {args.settle:.0f} s; load {load}", flush=True)
        spark.stop()
        print(f"\nproduced {producer.sent:,} records at {args.rate:,}/s; load now {loadavg()}")
        p99: dict[str, float] = {}
        round_p99: dict[str, float] = {}
        for reader, runs in results.items():
            lat = np.concatenate(runs) if runs else np.array([])
            if len(lat):
                p99[reader] = float(np.percentile(lat, 99))
                per_round = [float(np.percentile(r, 99)) for r in runs if len(r)]
                round_p99[reader] = float(np.median(per_round))
                print(
                    f"  {reader:<12} p50 {np.percentile(lat, 50):6.0f} ms  p99 {p99[reader]:6.0f} ms; "
                    f"median of the rounds' p99s {round_p99[reader]:6.0f} ms "
                    f"({', '.join(f'{x:.0f}' for x in per_round)})"
                )
        for reader in ("native", "python"):
            if reader in p99 and "spark-kafka" in p99:
                print(
                    f"p99 kafka-unified {reader} / spark-kafka: {p99[reader] / p99['spark-kafka']:.2f} "
                    f"over every round's records, {round_p99[reader] / round_p99['spark-kafka']:.2f} "
                    "by the rounds' median p99s (goal <= 1.0)"
                )
    finally:
        if producer is not None:
            producer.stopped.set()
            producer.join(60)
        if not args.bootstrap:
            broker.stop()


if __name__ == "__main__":
    main()
