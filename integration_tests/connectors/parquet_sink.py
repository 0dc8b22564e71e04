"""Streaming queries into a Parquet sink, as the integration tests of every connector run them:
start (again if Spark's Python worker never started), wait for rows, check each record once.

The sink's committed rows are read back through its metadata log, so only committed files count.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from integration_tests.connectors.query_failure import failure_message

WORKER_START_FAILURE = "Python worker failed to connect back"
"""Spark's own start-up failure on an overloaded machine (the worker takes over 10 s to start)."""


def started(start: Callable[[], Any]) -> Any:
    """``start()`` a streaming query, again (same checkpoint) if its Python worker never started."""
    query = None
    for _attempt in range(3):
        query = start()
        while query.isActive and not query.recentProgress:
            time.sleep(0.2)
        error = query.exception()
        if error is None or WORKER_START_FAILURE not in str(error) or query.recentProgress:
            return query
    return query


def to_parquet(df: Any, out: Path, trigger: dict[str, Any]) -> Any:
    """Start streaming ``df`` into Parquet under ``out/data`` (checkpoint ``out/chk``)."""
    writer = (
        df.writeStream.format("parquet")
        .option("path", str(out / "data"))
        .option("checkpointLocation", str(out / "chk"))
        .trigger(**trigger)
    )
    return started(writer.start)


def terminated(query: Any, timeout_s: float) -> bool:
    """Whether ``query`` ended within ``timeout_s`` (``awaitTermination`` raises when it failed)."""
    try:
        return bool(query.awaitTermination(timeout_s))
    except Exception:  # StreamingQueryException: it ended, with the error the test looks at
        return True


def parquet_rows(spark: Any, out: Path, *, schema: str) -> list[Any]:
    """The committed rows of the sink (its metadata log names the files)."""
    rows: list[Any] = spark.read.schema(schema).parquet(str(out / "data")).collect()
    return rows


def wait_parquet(
    spark: Any, out: Path, count: int, query: Any, timeout_s: float, *, schema: str
) -> list[Any]:
    """The sink's rows once there are ``count``; fails at once if the query failed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        failed = failure_message(query)
        assert failed is None, failed
        if (out / "data" / "_spark_metadata").exists():
            rows = parquet_rows(spark, out, schema=schema)
            if len(rows) >= count:
                return rows
        time.sleep(0.5)
    raise AssertionError(f"fewer than {count} rows after {timeout_s} s")


def assert_exactly(rows: list[Any], values: list[bytes], *, column: str) -> None:
    """Each of ``values`` once in ``column`` of ``rows``: none lost, none duplicated, nothing else."""
    got = [bytes(r[column]) for r in rows]
    assert len(got) == len(set(got)), f"{len(got) - len(set(got))} duplicated records"
    missing = set(values) - set(got)
    assert not missing, f"{len(missing)} records lost"
    assert len(got) == len(values)


def run_available_now(df: Any, out: Path, checkpoint: Path, timeout_s: float = 120) -> None:
    """Stream ``df`` into Parquet at ``out`` with ``Trigger.AvailableNow``; raises the query's error."""
    query = (
        df.writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(timeout_s)
    finally:
        query.stop()
    if query.exception() is not None:
        raise query.exception()
