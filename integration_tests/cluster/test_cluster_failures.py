"""Executor and worker failures in the middle of a micro-batch, on the standalone cluster.

The query reads real Kafka with ``Trigger.AvailableNow`` into Spark's Parquet sink; the first task
of the first micro-batch pauses inside the batch (it writes a marker file with its Python worker's
pid), and the test kills that task's executor JVM, or its whole worker for good, meanwhile. Spark
retries the failed tasks with the same planned offset ranges, so every record lands exactly once.
"""

from __future__ import annotations

import collections
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from integration_tests.cluster import driver_jobs as jobs
from integration_tests.cluster.conftest import ClusterDriver
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.spark.cluster import SparkStandaloneCluster, executor_pid_of

pytestmark = pytest.mark.timeout(600)

RECORDS = 4000
PAUSE_S = 8.0


def _start_paused_query(
    driver: ClusterDriver, broker: KafkaBroker, tmp_path: Path
) -> tuple[Future[Any], list[bytes], int]:
    """Start the query; returns its future, the records, and the executor pid of the paused task."""
    topic = broker.create_topic(2)
    values = [f"x-{i:06d}".encode() for i in range(RECORDS)]
    for p in range(2):
        broker.produce(topic, values[p::2], partition=p)
    marker = tmp_path / "paused"
    future = driver.submit(
        jobs.stream_to_parquet,
        "kafka-unified",
        {
            "kafka.bootstrap.servers": broker.bootstrap,
            "subscribe": topic,
            "startingOffsets": "earliest",
            "maxOffsetsPerTrigger": str(RECORDS // 2),
        },
        ["partition", "offset", "value"],
        str(tmp_path / "out"),
        pause_marker=str(marker),
        pause_s=PAUSE_S,
    )
    deadline = time.monotonic() + 180
    while not marker.exists():
        if future.done():
            future.result()
            raise AssertionError("the query finished without pausing")
        assert time.monotonic() < deadline, "no task reached the pause"
        time.sleep(0.1)
    executor = executor_pid_of(int(marker.read_text()))
    assert executor is not None, "the paused task does not run in an executor JVM"
    return future, values, executor


def _assert_exactly_once(rows: list[tuple[Any, ...]], values: list[bytes]) -> None:
    got = [r[2] for r in rows]
    dupes = [v for v, n in collections.Counter(got).items() if n > 1]
    assert not dupes, f"{len(dupes)} records duplicated, e.g. {dupes[:3]}"
    assert sorted(got) == sorted(values), f"{len(set(values) - set(got))} records missing"


def test_executor_killed_in_a_micro_batch(
    spark_cluster: SparkStandaloneCluster,
    cluster_driver: ClusterDriver,
    cluster_kafka: KafkaBroker,
    tmp_path: Path,
) -> None:
    future, values, executor = _start_paused_query(cluster_driver, cluster_kafka, tmp_path)
    assert not future.done()
    spark_cluster.kill_executor(executor)
    out = future.result(300)
    _assert_exactly_once(out["rows"], values)
    # the worker started a new executor for the application in place of the killed one
    assert executor not in spark_cluster.wait_executors(2)


def test_worker_lost_for_good(
    spark_cluster: SparkStandaloneCluster,
    cluster_driver: ClusterDriver,
    cluster_kafka: KafkaBroker,
    tmp_path: Path,
) -> None:
    future, values, executor = _start_paused_query(cluster_driver, cluster_kafka, tmp_path)
    lost = spark_cluster.worker_of(executor)
    spark_cluster.stop_worker(lost)
    try:
        out = future.result(300)
        _assert_exactly_once(out["rows"], values)
        assert spark_cluster.alive_workers() == 1
        assert len(spark_cluster.executor_pids()) == 1  # the query finished on the other worker alone
    finally:
        spark_cluster.restart_worker(lost)  # a later test gets a second executor again, when it asks
