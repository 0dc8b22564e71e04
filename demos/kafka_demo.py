"""The Kafka demo: an embedded broker, a producer of sample events, a ``kafka-unified`` stream."""

from __future__ import annotations

import json
import multiprocessing
import random
import shutil
import tempfile
import time
from typing import Any

from connector_base.spark import local_spark_session
from demos.progress import follow_then_stop, memory_query, report
from sparkflow_testing.kafka.brokers import start_embedded_kafka

PARTITIONS = 4
EVENTS_PER_SECOND = 5_000
EVENT_SCHEMA = "id long, user string, amount double"


def _produce(bootstrap: str, topic: str, seconds: float, produced: Any) -> None:
    """Produce sample events at about ``EVENTS_PER_SECOND`` for ``seconds`` (in its own process)."""
    from confluent_kafka import Producer

    rnd = random.Random(7)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        tick = time.monotonic()
        for _ in range(EVENTS_PER_SECOND // 10):
            user = f"user-{rnd.randrange(50)}"
            event = {"id": n, "user": user, "amount": round(rnd.uniform(1, 500), 2)}
            producer.produce(topic, json.dumps(event).encode(), key=user.encode())
            n += 1
        producer.poll(0)
        if producer.flush(10) == 0:
            produced.value = n
        time.sleep(max(0.0, 0.1 - (time.monotonic() - tick)))
    producer.flush(30)
    produced.value = n


def start_producer(bootstrap: str, topic: str, seconds: float) -> tuple[Any, Any]:
    """Start the sample producer in its own process; returns the process and its shared event count.

    A separate process: a busy producer thread inside the driver's Python process starved Spark's
    Python workers of their connect-back (measured: "failed to connect back").
    """
    ctx = multiprocessing.get_context("spawn")
    produced = ctx.Value("q", 0)
    proc = ctx.Process(target=_produce, args=(bootstrap, topic, seconds, produced), daemon=True)
    proc.start()
    return proc, produced


def read_events(spark: Any, bootstrap: str, topic: str, *positions: str) -> Any:
    """The demo topic as a stream of ``positions`` (e.g. ``partition``, ``offset``) plus the parsed event."""
    return (
        spark.readStream.format("kafka-unified")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "20000")
        .load()
        .selectExpr(*positions, f"from_json(CAST(value AS STRING), '{EVENT_SCHEMA}') AS e")
        .selectExpr(*positions, "e.*")
    )


def follow_producer(query: Any, spark: Any, table: str, proc: Any, produced: Any) -> int:
    """Follow ``query`` while the producer runs, then until it caught up; the number of batches."""
    return follow_then_stop(
        query, spark, table, lambda: int(produced.value), proc.is_alive, lambda: proc.join(30)
    )


def run(seconds: float) -> int:
    """Start a broker, produce for ``seconds`` while a query reads; 0 when every event arrived once."""
    work = tempfile.mkdtemp(prefix="sparkflow-kafka-demo-")
    broker = start_embedded_kafka()
    print(f"demo: embedded Kafka-protocol broker ({broker.kind}) at {broker.bootstrap}")
    spark = None
    try:
        topic = broker.create_topic(PARTITIONS, name="demo-events")
        producer_proc, produced = start_producer(broker.bootstrap, topic, seconds)
        print(
            f"demo: producing ~{EVENTS_PER_SECOND} events/s to '{topic}' ({PARTITIONS} partitions) "
            f"for {seconds:.0f}s"
        )

        spark = local_spark_session("sparkflow-kafka-demo")
        spark.sparkContext.setLogLevel("ERROR")
        events = read_events(spark, broker.bootstrap, topic, "partition", "offset")
        query = memory_query(events, "events", f"{work}/checkpoint")
        batches = follow_producer(query, spark, "events", producer_proc, produced)
        return report(spark, "events", int(produced.value), batches)
    finally:
        if spark is not None:
            spark.stop()
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
