"""What every demo does while its query runs: print each micro-batch, stop when all data arrived."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

SETTLE_S = 3.0


def memory_query(events: Any, table: str, checkpoint: str) -> Any:
    """Start the demo's query: ``events`` into the in-memory table ``table``, a trigger a second."""
    return (
        events.writeStream.format("memory")
        .queryName(table)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="1 second")
        .start()
    )


def follow_then_stop(
    query: Any,
    spark: Any,
    table: str,
    produced: Callable[[], int],
    producing: Callable[[], bool],
    stop_producer: Callable[[], None],
) -> int:
    """``follow`` the query, then stop it and the producer (also when following failed)."""
    try:
        return follow(query, spark, table, produced, producing)
    finally:
        query.stop()
        stop_producer()


def follow(
    query: Any, spark: Any, table: str, produced: Callable[[], int], producing: Callable[[], bool]
) -> int:
    """Print new micro-batches until production ended and ``table`` holds everything; the batch count."""
    seen: set[int] = set()
    settled_since = None
    while True:
        for p in query.recentProgress:
            if p["batchId"] in seen:
                continue
            seen.add(p["batchId"])
            rate = p.get("processedRowsPerSecond") or 0.0
            print(f"batch {p['batchId']:>3}: {p['numInputRows']:>6} rows ({rate:,.0f} rows/s)", flush=True)
        if query.exception() is not None:
            raise RuntimeError(f"the query failed: {query.exception()}")
        done = spark.sql(f"select count(*) from {table}").collect()[0][0]
        if not producing() and done >= produced():
            settled_since = settled_since or time.monotonic()
            if time.monotonic() - settled_since > SETTLE_S:
                return len(seen)
        time.sleep(1.0)


def report(spark: Any, table: str, produced: int, batches: int) -> int:
    """Print the final counts and the top users; 0 when every row arrived exactly once."""
    total, distinct = spark.sql(f"select count(*), count(distinct id) from {table}").collect()[0]
    top = spark.sql(
        f"select user, round(sum(amount), 2) as total from {table} group by user order by total desc limit 3"
    ).collect()
    print(f"produced {produced} rows; read {total} rows, {distinct} distinct ids, {batches} micro-batches")
    print("top users by amount: " + ", ".join(f"{r['user']}={r['total']}" for r in top))
    ok = bool(total == distinct == produced)
    print("demo: OK, every row exactly once" if ok else "demo: MISMATCH")
    return 0 if ok else 1
