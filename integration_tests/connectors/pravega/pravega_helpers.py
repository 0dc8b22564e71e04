"""Helpers and fixtures for the ``format("pravega")`` tests (imported by the test_pravega_* modules).

Streams are created and test data written with the project's own controller client and writer
(:class:`~sparkflow_testing.pravega.cluster.PravegaCluster`), so the suite runs on every Python the
project supports; the official client is only an oracle (interop and conformance modules).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from sparkflow_testing.pravega.cluster import PravegaCluster, unique_name

CLIENT_TIMEOUT_S = 120.0
SINK_CRASH_DRIVER = Path(__file__).with_name("pravega_sink_crash_driver.py")


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The package's shared local[2] SparkSession (never stopped here: other modules may share it)."""
    from connector_base.spark import local_spark_session

    session = local_spark_session("pravega-tests", cores=2)
    session.sparkContext.setLogLevel("ERROR")
    yield session


# --- used by tests ------------------------------------------------------------------------------
def new_stream(cluster: PravegaCluster, segments: int = 3, scope: str | None = None) -> tuple[str, str]:
    """Create a scope (unless given) and a stream with ``segments`` fixed segments."""
    scope = scope or unique_name("sc")
    stream = unique_name("st")
    cluster.create_scope(scope)
    cluster.create_stream(scope, stream, segments)
    return scope, stream


def write_events(
    cluster: PravegaCluster, scope: str, stream: str, events: Sequence[tuple[str | None, bytes]]
) -> None:
    """Write ``(routing key, payload)`` events in order with the project's writer and flush."""
    cluster.write(scope, stream, list(events))


def keyed_events(prefix: str, count: int, keys: int = 8, start: int = 0) -> list[tuple[str, bytes]]:
    """``count`` events ``<prefix>:<key>:<seq>`` over ``keys`` routing keys, numbered from ``start``."""
    return [(f"k{i % keys}", f"{prefix}:k{i % keys}:{i:08d}".encode()) for i in range(start, start + count)]


def read_options(cluster: PravegaCluster, scope: str, stream: str, **extra: str) -> dict[str, str]:
    """Options of ``format("pravega")`` for one stream."""
    return {"controller": cluster.controller_uri, "scope": scope, "stream": stream, **extra}


def run_stream(spark: Any, options: dict[str, str], tmp: str, name: str, **trigger: Any) -> Any:
    """Start a streaming query into a memory table (``trigger`` as for ``DataStreamWriter.trigger``)."""
    writer = (
        spark.readStream.format("pravega")
        .options(**options)
        .load()
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", os.path.join(tmp, name))
    )
    if trigger:
        writer = writer.trigger(**trigger)
    return writer.start()


def wait_rows(spark: Any, name: str, count: int, query: Any, timeout: float = 90.0) -> list[Any]:
    """Wait until the memory table ``name`` holds at least ``count`` rows."""
    deadline = time.monotonic() + timeout
    rows: list[Any] = []
    while time.monotonic() < deadline:
        if query.exception() is not None:
            raise AssertionError(f"query failed: {query.exception()}")
        rows = spark.sql(f"select * from {name}").collect()
        if len(rows) >= count:
            return rows
        time.sleep(0.5)
    raise AssertionError(f"only {len(rows)} of {count} rows after {timeout} s")


def assert_key_order(rows: Sequence[Any]) -> None:
    """Events of each routing key appear in sequence order when sorted by (batch, segment order)."""
    by_key: dict[str, list[int]] = {}
    for payload in rows:
        _prefix, key, seq = payload.decode().split(":")
        by_key.setdefault(key, []).append(int(seq))
    for key, seqs in by_key.items():
        assert seqs == sorted(seqs), f"routing key {key} out of order: {seqs[:20]}"


def collect_available_now(
    spark: Any, options: dict[str, str], checkpoint: str, timeout: float = 180.0
) -> Any:
    """Run an AvailableNow query with ``foreachBatch``; returns ``(batches, query)`` where ``batches``
    is a list of ``(batch id, rows)`` in the order Spark committed them."""
    batches: list[tuple[int, list[Any]]] = []

    def sink(df: Any, batch_id: int) -> None:
        batches.append((batch_id, df.collect()))

    query = (
        spark.readStream.format("pravega")
        .options(**options)
        .load()
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(timeout)
    except Exception:  # the caller looks at query.exception()
        pass
    return batches, query


def start_foreach_batch(spark: Any, options: dict[str, str], checkpoint: str) -> tuple[list[Any], Any]:
    """Start a continuous query (200 ms trigger) whose batches are appended to the returned list."""
    batches: list[tuple[int, list[Any]]] = []

    def sink(df: Any, batch_id: int) -> None:
        batches.append((batch_id, df.collect()))

    query = (
        spark.readStream.format("pravega")
        .options(**options)
        .load()
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    return batches, query


def wait_batches(batches: list[Any], count: int, query: Any, timeout: float = 120.0) -> None:
    """Wait until the batches hold ``count`` rows in all."""
    deadline = time.monotonic() + timeout
    total = 0
    while time.monotonic() < deadline:
        if query.exception() is not None:
            raise AssertionError(f"query failed: {query.exception()}")
        total = sum(len(rows) for _b, rows in list(batches))
        if total >= count:
            return
        time.sleep(0.3)
    raise AssertionError(f"only {total} of {count} rows after {timeout} s")


def run_sink_crash_driver(
    options: dict[str, Any], checkpoint: Path, crash_batch: int | None, mode: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``pravega_sink_crash_driver.py`` (Pravega to Pravega, exactly once) in its own process group,
    dying inside the sink's commit of ``crash_batch`` (``mode``: ``after-commit``, ``after-log``)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[3]), env.get("PYTHONPATH", "")])
    args = [sys.executable, str(SINK_CRASH_DRIVER), json.dumps(options), str(checkpoint)]
    if crash_batch is not None:
        args.append(str(crash_batch))
        if mode is not None:
            args.append(mode)
    return subprocess.run(args, capture_output=True, text=True, timeout=500, start_new_session=True, env=env)


def deduped_by_event_time(
    spark: Any, options: dict[str, str], checkpoint: Path, delay: str
) -> tuple[int, int, list[str]]:
    """``(rows read, rows dropped as late, ids out)`` of JSON events ``{"id", "ts": epoch ms}`` read
    with ``options`` under ``withWatermark("t", delay)`` + ``dropDuplicatesWithinWatermark(["id"])``
    (append mode, ``Trigger.AvailableNow``, into a memory table named after ``checkpoint``)."""
    from pyspark.sql import functions as F

    from integration_tests.connectors.spark_batches import run_to_memory

    name = f"pravega_dedup_{checkpoint.name}"
    text = F.col("event").cast("string")
    deduped = (
        spark.readStream.format("pravega")
        .options(**options)
        .load()
        .select(
            F.get_json_object(text, "$.id").alias("id"),
            F.timestamp_millis(F.get_json_object(text, "$.ts").cast("long")).alias("t"),
        )
        .withWatermark("t", delay)
        .dropDuplicatesWithinWatermark(["id"])
    )
    read, dropped = run_to_memory(deduped, name, checkpoint)
    return read, dropped, [r[0] for r in spark.sql(f"select id from {name}").collect()]
