"""A skewed Kafka topic and a watermarked query over it, for the event-time cut's test and benchmark.

Partition 0 holds records one second apart from ``base``; partition 1 the same number of records
an hour earlier (its producer lags). ``watermarked_counts`` runs the issue's query (a 10-minute
watermark, ``dropDuplicatesWithinWatermark`` and a 5-minute windowed count, update mode) with
``Trigger.AvailableNow`` and returns the rows counted and the rows Spark dropped as late.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass
from typing import Any

from sparkflow_testing.kafka.broker import KafkaBroker

__all__ = ["LateCount", "skewed_topic", "watermarked_counts"]

HOUR_MS = 3_600_000


def skewed_topic(broker: KafkaBroker, records: int, lag_ms: int = HOUR_MS, step_ms: int = 1000) -> str:
    """A 2-partition topic: ``records`` in each, partition 1 ``lag_ms`` behind partition 0."""
    topic = broker.create_topic(2)
    base = int(time.time() * 1000) - 2 * lag_ms
    for partition, start in ((0, base), (1, base - lag_ms)):
        broker.produce(
            topic,
            [f"p{partition}-{i}".encode() for i in range(records)],
            partition=partition,
            timestamps=[start + i * step_ms for i in range(records)],
        )
    return topic


@dataclass(frozen=True)
class LateCount:
    """What one run of the watermarked query saw."""

    counted: int
    dropped: int
    batches: int
    seconds: float
    checkpoint: str
    latest_reports: list[str | None]


def watermarked_counts(spark: Any, df: Any, scratch: str, timeout_s: float = 300.0) -> LateCount:
    """Run the watermarked windowed count over ``df`` (Kafka's columns) to the end of the data."""
    from pyspark.sql import functions as F

    name = f"wm_{uuid.uuid4().hex[:10]}"
    checkpoint = os.path.join(scratch, name)
    counts = (
        df.withWatermark("timestamp", "10 minutes")
        .dropDuplicatesWithinWatermark(["partition", "offset"])
        .groupBy(F.window("timestamp", "5 minutes"))
        .count()
    )
    began = time.monotonic()
    query = (
        counts.writeStream.format("memory")
        .queryName(name)
        .outputMode("update")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    try:
        if not query.awaitTermination(timeout_s):
            raise AssertionError(f"the query did not finish within {timeout_s} s")
        if query.exception() is not None:
            raise AssertionError(f"query failed: {query.exception()}")
        seconds = time.monotonic() - began
        progress = [p for p in query.recentProgress if p["numInputRows"]]
        dropped = sum(
            op.get("numRowsDroppedByWatermark", 0) for p in query.recentProgress for op in p["stateOperators"]
        )
        final = spark.sql(f"select window, max(count) as n from {name} group by window").collect()
        reports = [p["sources"][0].get("latestOffset") for p in progress]
        return LateCount(sum(r["n"] for r in final), dropped, len(progress), seconds, checkpoint, reports)
    finally:
        query.stop()
