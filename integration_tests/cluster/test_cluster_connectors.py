"""Each connector's batch read, streaming AvailableNow read and sink on a standalone cluster.

Two workers with one core each, so every read runs in two executor JVMs with their own Python
workers; the tests also check that the work really spread over both executors.
"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from integration_tests.cluster import driver_jobs as jobs
from integration_tests.cluster.conftest import ClusterDriver
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.kinesis.endpoint import KinesisEndpoint
from sparkflow_testing.pravega.cluster import PravegaCluster, run_isolated, unique_name
from sparkflow_testing.spark.cluster import SparkStandaloneCluster

pytestmark = pytest.mark.timeout(600)

KAFKA_COLUMNS = ["partition", "offset", "value"]


def _kafka_topic(broker: KafkaBroker, partitions: int, count: int, tag: str) -> tuple[str, list[bytes]]:
    topic = broker.create_topic(partitions)
    values = [f"{tag}-{i:06d}".encode() for i in range(count)]
    for p in range(partitions):
        broker.produce(topic, values[p::partitions], partition=p)
    return topic, values


def _exactly_once(got: list[bytes], expected: list[bytes]) -> None:
    dupes = [v for v, n in collections.Counter(got).items() if n > 1]
    assert not dupes, f"{len(dupes)} records duplicated, e.g. {dupes[:3]}"
    assert sorted(got) == sorted(expected), f"{len(set(expected) - set(got))} records missing"


def test_kafka_batch_read_spreads_over_both_executors(
    cluster_driver: ClusterDriver, cluster_kafka: KafkaBroker
) -> None:
    topic, values = _kafka_topic(cluster_kafka, 4, 2000, "kb")
    out = cluster_driver.run(
        jobs.batch_read,
        "kafka-unified",
        # a parallelism of 4 keeps the four small ranges apart (they would share tasks down to it)
        {"kafka.bootstrap.servers": cluster_kafka.bootstrap, "subscribe": topic, "minPartitions": "4"},
        KAFKA_COLUMNS,
    )
    _exactly_once([r[2] for r in out["rows"]], values)
    assert len(out["tasks"]) == 4
    assert len(out["executors"]) == 2, out["executors"]


def test_kafka_available_now_into_parquet(
    cluster_driver: ClusterDriver, cluster_kafka: KafkaBroker, tmp_path: Path
) -> None:
    topic, values = _kafka_topic(cluster_kafka, 2, 3000, "ks")
    out = cluster_driver.run(
        jobs.stream_to_parquet,
        "kafka-unified",
        {
            "kafka.bootstrap.servers": cluster_kafka.bootstrap,
            "subscribe": topic,
            "startingOffsets": "earliest",
            "maxOffsetsPerTrigger": "1000",
        },
        KAFKA_COLUMNS,
        str(tmp_path),
    )
    _exactly_once([r[2] for r in out["rows"]], values)
    assert out["batches"] == [1000, 1000, 1000]


def test_kafka_sink_batch_and_streaming(
    cluster_driver: ClusterDriver, cluster_kafka: KafkaBroker, tmp_path: Path
) -> None:
    target = cluster_kafka.create_topic(2)
    rows = [(f"k{i % 7}", f"w-{i:05d}") for i in range(1000)]
    cluster_driver.run(
        jobs.batch_write,
        "kafka-unified",
        {"kafka.bootstrap.servers": cluster_kafka.bootstrap, "topic": target},
        rows,
        "key string, value string",
        2,
    )
    source, values = _kafka_topic(cluster_kafka, 2, 500, "copy")
    copied = cluster_driver.run(
        jobs.stream_copy,
        "kafka-unified",
        {
            "kafka.bootstrap.servers": cluster_kafka.bootstrap,
            "subscribe": source,
            "startingOffsets": "earliest",
        },
        ["key", "value"],
        "kafka-unified",
        {"kafka.bootstrap.servers": cluster_kafka.bootstrap, "topic": target},
        str(tmp_path / "chk"),
    )
    assert copied == 500
    back = cluster_driver.run(
        jobs.batch_read,
        "kafka-unified",
        {"kafka.bootstrap.servers": cluster_kafka.bootstrap, "subscribe": target},
        ["value"],
    )
    _exactly_once([r[0] for r in back["rows"]], [v.encode() for _k, v in rows] + values)


def test_files_batch_and_available_now(cluster_driver: ClusterDriver, tmp_path: Path) -> None:
    directory = str(tmp_path / "in")
    names = cluster_driver.run(jobs.write_files, directory, 6, 500)
    options = {"path": directory, "format": "jsonl"}
    schema = "id long, name string"
    batch = cluster_driver.run(jobs.batch_read, "files-unified", options, ["name"], schema)
    _exactly_once([r[0] for r in batch["rows"]], names)
    assert len(batch["executors"]) == 2, batch["executors"]
    stream = cluster_driver.run(
        jobs.stream_to_parquet,
        "files-unified",
        {**options, "maxFilesPerTrigger": "2"},
        ["name"],
        str(tmp_path / "out"),
        schema,
    )
    _exactly_once([r[0] for r in stream["rows"]], names)
    assert stream["batches"] == [1000, 1000, 1000]


def test_files_backlog_spreads_over_every_executor_core(
    spark_cluster: SparkStandaloneCluster, cluster_driver: ClusterDriver, tmp_path: Path
) -> None:
    directory = str(tmp_path / "in")
    names = cluster_driver.run(jobs.write_files, directory, 8, 100)  # eight files of equal size
    options = {"path": directory, "format": "jsonl"}
    schema = "id long, name string"
    # no option: the plan follows the cluster's hint (the driver's environment), not the driver's cores
    planned = cluster_driver.run(jobs.batch_read, "files-unified", options, ["name"], schema)
    _exactly_once([r[0] for r in planned["rows"]], names)
    assert len(planned["tasks"]) == spark_cluster.planning_parallelism
    assert len(planned["executors"]) == spark_cluster.total_cores
    chosen = cluster_driver.run(
        jobs.batch_read, "files-unified", {**options, "minPartitions": "8"}, ["name"], schema
    )
    assert len(chosen["tasks"]) == 8
    assert len(chosen["executors"]) == spark_cluster.total_cores


def test_pravega_sink_batch_read_and_available_now(
    cluster_driver: ClusterDriver, cluster_pravega: PravegaCluster, tmp_path: Path
) -> None:
    scope, stream = unique_name("sc"), unique_name("st")
    run_isolated(jobs.create_pravega_stream, cluster_pravega.controller_uri, scope, stream, 2, timeout=120)
    options = {"controller": cluster_pravega.controller_uri, "scope": scope, "stream": stream}
    events = [(f"p-{i:05d}", f"k{i % 5}") for i in range(1500)]
    cluster_driver.run(
        jobs.batch_write,
        "pravega",
        {**options, "exactly_once": "true"},
        events,
        "event string, routing_key string",
        2,
    )
    expected = [e.encode() for e, _k in events]
    batch = cluster_driver.run(jobs.batch_read, "pravega", options, ["event"])
    _exactly_once([r[0] for r in batch["rows"]], expected)
    assert len(batch["executors"]) == 2, batch["executors"]
    stream_out = cluster_driver.run(
        jobs.stream_to_parquet, "pravega", {**options, "maxEventsPerTrigger": "500"}, ["event"], str(tmp_path)
    )
    _exactly_once([r[0] for r in stream_out["rows"]], expected)
    assert len(stream_out["batches"]) >= 3


def test_kinesis_batch_available_now_and_sink(
    cluster_driver: ClusterDriver, cluster_kinesis: KinesisEndpoint, tmp_path: Path
) -> None:
    source = cluster_kinesis.create_stream(2)
    records = [(f"k{i % 6}", f"kin-{i:05d}".encode()) for i in range(600)]
    cluster_kinesis.put_records(source, records)
    expected = [d for _k, d in records]
    batch = cluster_driver.run(
        jobs.batch_read, "kinesis-unified", _kinesis(cluster_kinesis, source), ["data"]
    )
    _exactly_once([r[0] for r in batch["rows"]], expected)
    assert len(batch["executors"]) == 2, batch["executors"]
    stream_out = cluster_driver.run(
        jobs.stream_to_parquet,
        "kinesis-unified",
        _kinesis(cluster_kinesis, source, maxRecordsPerTrigger="200"),
        ["data"],
        str(tmp_path),
    )
    _exactly_once([r[0] for r in stream_out["rows"]], expected)
    target = cluster_kinesis.create_stream(2)
    cluster_driver.run(
        jobs.batch_write,
        "kinesis-unified",
        _kinesis(cluster_kinesis, target),
        [(d, k) for k, d in records],
        "data binary, partitionKey string",
        2,
    )
    back = cluster_driver.run(jobs.batch_read, "kinesis-unified", _kinesis(cluster_kinesis, target), ["data"])
    _exactly_once([r[0] for r in back["rows"]], expected)


def _kinesis(endpoint: KinesisEndpoint, stream: str, **extra: str) -> dict[str, str]:
    return endpoint.options(
        streamName=stream, startingPosition="TRIM_HORIZON", cutSafetyMarginMs="0", **extra
    )
