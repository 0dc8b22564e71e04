"""The connectors through Spark Connect: a server started from the pyspark wheel, a remote client.

No ``spark.dataSource.register`` call anywhere: the server's Python workers find the formats
through the ``pyspark_*`` modules. ``files-unified`` has no sink of its own; its streaming read is
written with Spark's Parquet sink.
"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from integration_tests.cluster import driver_jobs as jobs
from integration_tests.cluster.conftest import ClusterDriver
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.pravega.cluster import PravegaCluster, run_isolated, unique_name

pytestmark = pytest.mark.timeout(600)


def _exactly_once(got: list[bytes], expected: list[bytes]) -> None:
    dupes = [v for v, n in collections.Counter(got).items() if n > 1]
    assert not dupes, f"{len(dupes)} records duplicated, e.g. {dupes[:3]}"
    assert sorted(got) == sorted(expected), f"{len(set(expected) - set(got))} records missing"


def test_kafka_unified_over_connect(
    connect_client: ClusterDriver, cluster_kafka: KafkaBroker, tmp_path: Path
) -> None:
    source = cluster_kafka.create_topic(2)
    values = [f"c-{i:05d}".encode() for i in range(600)]
    cluster_kafka.produce(source, values)
    kafka = {"kafka.bootstrap.servers": cluster_kafka.bootstrap}
    batch = connect_client.run(jobs.batch_read, "kafka-unified", {**kafka, "subscribe": source}, ["value"])
    _exactly_once([r[0] for r in batch["rows"]], values)
    streamed = connect_client.run(
        jobs.stream_to_parquet,
        "kafka-unified",
        {**kafka, "subscribe": source, "startingOffsets": "earliest", "maxOffsetsPerTrigger": "300"},
        ["value"],
        str(tmp_path / "parquet"),
    )
    _exactly_once([r[0] for r in streamed["rows"]], values)
    target = cluster_kafka.create_topic(1)
    rows = [(f"k{i}", f"w-{i:04d}") for i in range(200)]
    connect_client.run(
        jobs.batch_write, "kafka-unified", {**kafka, "topic": target}, rows, "key string, value string", 2
    )
    copied = connect_client.run(
        jobs.stream_copy,
        "kafka-unified",
        {**kafka, "subscribe": source, "startingOffsets": "earliest"},
        ["key", "value"],
        "kafka-unified",
        {**kafka, "topic": target},
        str(tmp_path / "chk"),
    )
    assert copied == len(values)
    back = connect_client.run(jobs.batch_read, "kafka-unified", {**kafka, "subscribe": target}, ["value"])
    _exactly_once([r[0] for r in back["rows"]], [v.encode() for _k, v in rows] + values)


def test_pravega_over_connect(
    connect_client: ClusterDriver, cluster_pravega: PravegaCluster, tmp_path: Path
) -> None:
    scope, source = unique_name("sc"), unique_name("st")
    run_isolated(jobs.create_pravega_stream, cluster_pravega.controller_uri, scope, source, 2, timeout=120)
    pravega = {"controller": cluster_pravega.controller_uri, "scope": scope}
    events = [(f"e-{i:05d}", f"k{i % 4}") for i in range(500)]
    connect_client.run(
        jobs.batch_write,
        "pravega",
        {**pravega, "stream": source},
        events,
        "event string, routing_key string",
        2,
    )
    expected = [e.encode() for e, _k in events]
    batch = connect_client.run(jobs.batch_read, "pravega", {**pravega, "stream": source}, ["event"])
    _exactly_once([r[0] for r in batch["rows"]], expected)
    streamed = connect_client.run(
        jobs.stream_to_parquet,
        "pravega",
        {**pravega, "stream": source, "maxEventsPerTrigger": "200"},
        ["event"],
        str(tmp_path / "parquet"),
    )
    _exactly_once([r[0] for r in streamed["rows"]], expected)
    target = unique_name("st")
    copied = connect_client.run(
        jobs.stream_copy,
        "pravega",
        {**pravega, "stream": source},
        ["event"],
        "pravega",
        {**pravega, "stream": target, "allow_create_stream": "true", "exactly_once": "true"},
        str(tmp_path / "chk"),
    )
    assert copied == len(events)
    back = connect_client.run(jobs.batch_read, "pravega", {**pravega, "stream": target}, ["event"])
    _exactly_once([r[0] for r in back["rows"]], expected)


def test_files_unified_over_connect(connect_client: ClusterDriver, tmp_path: Path) -> None:
    directory = str(tmp_path / "in")
    names = connect_client.run(jobs.write_files, directory, 3, 200)
    options = {"path": directory, "format": "jsonl"}
    schema = "id long, name string"
    batch = connect_client.run(jobs.batch_read, "files-unified", options, ["name"], schema)
    _exactly_once([r[0] for r in batch["rows"]], names)
    streamed = connect_client.run(
        jobs.stream_to_parquet,
        "files-unified",
        {**options, "maxFilesPerTrigger": "1"},
        ["name"],
        str(tmp_path / "out"),
        schema,
    )
    _exactly_once([r[0] for r in streamed["rows"]], names)
    assert streamed["batches"] == [200, 200, 200]
