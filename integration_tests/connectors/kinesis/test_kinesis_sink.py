"""The sink: df.write / writeStream with PutRecords batches, partial failures retried."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest

from integration_tests.connectors.kinesis.helpers import keyed, options, wait_until
from sparkflow_testing.kinesis.endpoint import KinesisEndpoint, ThrottlingProxy


def _read_back(spark: Any, endpoint: KinesisEndpoint, stream: str) -> list[tuple[bytes, str]]:
    return sorted(
        keyed(spark.read.format("kinesis-unified").options(**options(endpoint, stream)).load().collect())
    )


@pytest.mark.timeout(300)
def test_batch_write_with_partial_failures_retried(kinesis_endpoint: KinesisEndpoint, spark: Any) -> None:
    stream = kinesis_endpoint.create_stream(2)
    rows = [(f"value-{i}".encode(), f"key-{i % 13}") for i in range(1300)]
    df = spark.createDataFrame(rows, "data binary, partitionKey string").repartition(2)
    proxy = ThrottlingProxy(kinesis_endpoint.url, actions=("PutRecords",), every=4, partial_put_every=2)
    try:
        df.write.format("kinesis-unified").options(
            **{**options(kinesis_endpoint, stream), "endpointUrl": proxy.url}
        ).mode("append").save()
    finally:
        proxy.stop()
    assert proxy.partial_failures > 0 and proxy.injected > 0, (proxy.partial_failures, proxy.injected)
    # at-least-once; entries reported failed were never stored, so there are no duplicates here either
    assert _read_back(spark, kinesis_endpoint, stream) == sorted(rows)


@pytest.mark.timeout(300)
def test_batch_write_with_partition_key_column_and_string_data(
    kinesis_endpoint: KinesisEndpoint, spark: Any
) -> None:
    stream = kinesis_endpoint.create_stream(1)
    rows = [(f"text-{i}", f"user-{i % 3}") for i in range(50)]
    df = spark.createDataFrame(rows, "data string, user string")
    df.write.format("kinesis-unified").options(
        **options(kinesis_endpoint, stream, partitionKeyColumn="user")
    ).mode("append").save()
    assert _read_back(spark, kinesis_endpoint, stream) == sorted((d.encode(), k) for d, k in rows)


@pytest.mark.timeout(180)
def test_sink_rejects_missing_columns(kinesis_endpoint: KinesisEndpoint, spark: Any) -> None:
    stream = kinesis_endpoint.create_stream(1)
    df = spark.createDataFrame([("x", "k")], "payload string, partitionKey string")
    with pytest.raises(Exception, match="'data'"):
        df.write.format("kinesis-unified").options(**options(kinesis_endpoint, stream)).mode("append").save()
    df2 = spark.createDataFrame([("x", "k")], "data string, key string")
    with pytest.raises(Exception, match="partitionKeyColumn"):
        df2.write.format("kinesis-unified").options(**options(kinesis_endpoint, stream)).mode("append").save()


@pytest.mark.timeout(300)
def test_write_stream_copies_a_stream(kinesis_endpoint: KinesisEndpoint, spark: Any, tmp_path: Path) -> None:
    source = kinesis_endpoint.create_stream(2)
    target = kinesis_endpoint.create_stream(2)
    records = [(f"k{i % 5}", f"copy-{i}".encode()) for i in range(400)]
    kinesis_endpoint.put_records(source, records)
    query = (
        spark.readStream.format("kinesis-unified")
        .options(**options(kinesis_endpoint, source))
        .load()
        .selectExpr("data", "partitionKey")
        .writeStream.format("kinesis-unified")
        .options(**options(kinesis_endpoint, target))
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(240)
    assert query.exception() is None
    got = _read_back(spark, kinesis_endpoint, target)
    counts = collections.Counter(got)
    assert set(counts) == {(d, k) for k, d in records}
    wait_until(lambda: True, 1, "nothing")
