"""Backlog on Spark with real Kafka: bigger micro-batches while catching up, lag figures in progress."""

from __future__ import annotations

import time
import urllib.request
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from connector_base.spark.lag_listener import LagListener
from integration_tests.connectors.kafka.helpers import batch_sizes, memory_query, stream, wait_rows
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.processes import free_port

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(300)]


def _available_now(spark: Any, df: Any, tmp_path: Any) -> tuple[list[int], int]:
    query, table = memory_query(df, tmp_path, {"availableNow": True})
    assert query.awaitTermination(180), "the AvailableNow query did not finish"
    assert query.exception() is None, query.exception()
    rows = spark.sql(f"select partition, offset from {table}").collect()
    assert len({(r["partition"], r["offset"]) for r in rows}) == len(rows)
    return batch_sizes(query), len(rows)


def test_a_backlog_run_makes_fewer_larger_batches(
    spark: Any, reference_broker: KafkaBroker, tmp_path: Any
) -> None:
    topic = reference_broker.create_topic(2)
    reference_broker.produce(topic, [f"v{i}".encode() for i in range(600)], partition=None)
    options = {"subscribe": topic, "startingOffsets": "earliest", "maxOffsetsPerTrigger": "50"}
    live, live_rows = _available_now(spark, stream(spark, reference_broker, **options).load(), tmp_path)
    sized = {**options, "backlog.maxRecordsPerTrigger": "250"}
    backlog, backlog_rows = _available_now(spark, stream(spark, reference_broker, **sized).load(), tmp_path)
    assert live_rows == backlog_rows == 600
    assert all(s <= 50 for s in live) and len(live) == 12, live
    # lag 600 enters backlog (>= 250): 250, 250; the 100 left are above the exit (50): one more of 100
    assert backlog == [250, 250, 100], backlog


def test_listener_sees_backlog_end_and_lag_reach_the_brokers_high_watermarks(
    spark: Any, reference_broker: KafkaBroker, tmp_path: Any
) -> None:
    topic = reference_broker.create_topic(2)
    reference_broker.produce(topic, [f"old{i}".encode() for i in range(800)], partition=None)
    registry = CollectorRegistry()
    listener = LagListener(prometheus=registry)
    spark.streams.addListener(listener)
    df = stream(
        spark,
        reference_broker,
        subscribe=topic,
        startingOffsets="earliest",
        maxOffsetsPerTrigger="40",
        **{"backlog.maxRecordsPerTrigger": "300"},
    ).load()
    query, table = memory_query(df, tmp_path)
    try:
        wait_rows(spark, table, 800, query)
        reference_broker.produce(topic, [f"new{i}".encode() for i in range(30)], partition=None)
        wait_rows(spark, table, 830, query)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            mine = [s for s in listener.samples if s.query_id == str(query.id)]
            if mine and mine[-1].lag_records == 0 and sum(s.num_input_rows for s in mine) == 830:
                break
            time.sleep(0.3)
        sizes = batch_sizes(query)
    finally:
        query.stop()
        spark.streams.removeListener(listener)
    mine = [s for s in listener.samples if s.query_id == str(query.id) and s.num_input_rows]
    flags = [s.backlog for s in mine]
    assert flags[0] is True and flags[-1] is False, flags
    assert flags == sorted(flags, reverse=True), flags  # true, then false, never back
    assert max(sizes) > 40 and all(s <= 300 for s in sizes), sizes
    assert all(s.num_input_rows <= 40 for s in mine if not s.backlog), sizes
    last = mine[-1]
    assert last.lag_records == 0 and last.pending_splits == 0
    high = reference_broker.end_offsets(topic)
    assert last.latest == {f"{topic}-{p}": end for p, end in high.items()}, (last.latest, high)
    assert sum(high.values()) == 830
    labels = {"query": table, "source": last.source}
    assert registry.get_sample_value("sparkflow_source_lag_records", labels) == 0
    assert registry.get_sample_value("sparkflow_source_backlog", labels) == 0
    # what Prometheus scrapes over HTTP
    port = free_port()
    server = listener.serve(port)
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            scraped = answer.read().decode()
    finally:
        server.shutdown()
        server.server_close()
    series = f'query="{table}",source="{last.source}"'
    assert f"sparkflow_source_lag_records{{{series}}} 0.0" in scraped, scraped[-1500:]
    assert f"sparkflow_source_backlog{{{series}}} 0.0" in scraped, scraped[-1500:]


def test_backlog_by_time_behind_from_offsets_by_timestamp(
    spark: Any, reference_broker: KafkaBroker, tmp_path: Any
) -> None:
    topic = reference_broker.create_topic(1)
    two_hours_ago = int(time.time() * 1000) - 2 * 3_600_000
    old = [f"old{i}".encode() for i in range(300)]
    reference_broker.produce(topic, old, timestamps=[two_hours_ago + i for i in range(300)])
    reference_broker.produce(topic, [f"new{i}".encode() for i in range(20)])
    options = {
        "subscribe": topic,
        "startingOffsets": "earliest",
        "maxOffsetsPerTrigger": "20",
        "backlog.maxRecordsPerTrigger": "100",
        "backlog.enterRecords": "1000000",  # records never decide here: time does
        "backlog.exitRecords": "999999",
        "backlog.enterLagMs": "1h",
        "backlog.exitLagMs": "10m",
    }
    sizes, rows = _available_now(spark, stream(spark, reference_broker, **options).load(), tmp_path)
    # 2 h behind: backlog batches of 100 over the old records; at the new ones it is live again
    assert rows == 320 and sizes == [100, 100, 100, 20], sizes
