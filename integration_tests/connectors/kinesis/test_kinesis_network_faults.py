"""Network faults between the connector and Kinesis (kinesalite), through a ``FaultProxy``.

kinesalite speaks HTTP at one URL, so a plain TCP proxy in front of it carries every call of the
driver and the executors. One kinesalite and one proxy for this module; test data is written past
the proxy. Each test checks that nothing is lost or duplicated, or that an outage longer than
``networkTimeoutMs`` ends the query with a clear error in bounded time.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from integration_tests.connectors.kinesis.helpers import options, write
from integration_tests.connectors.network_faults import ResetsWhileReading, healthy
from integration_tests.connectors.parquet_sink import (
    assert_exactly,
    parquet_rows,
    terminated,
    to_parquet,
    wait_parquet,
)
from sparkflow_testing.kinesis.endpoint import KinesisEndpoint, start_kinesalite
from sparkflow_testing.network.fault_proxy import Direction, FaultProxy

pytestmark = [pytest.mark.spark, pytest.mark.integration]

FORMAT = "kinesis-unified"
SINK_SCHEMA = "data binary, shardId string, sequenceNumber string"
_parquet = functools.partial(parquet_rows, schema=SINK_SCHEMA)
_wait_parquet = functools.partial(wait_parquet, schema=SINK_SCHEMA)
_assert_exactly = functools.partial(assert_exactly, column="data")
FAST_FAILURE = {"networkTimeoutMs": "3000", "readTimeoutMs": "2000"}


@dataclass
class ProxiedKinesis:
    endpoint: KinesisEndpoint
    proxy: FaultProxy

    def options(self, stream: str, **extra: str) -> dict[str, str]:
        return {**options(self.endpoint, stream, **extra), "endpointUrl": f"http://{self.proxy.address}"}

    def stream(self, shards: int, records: int, tag: str) -> tuple[str, list[bytes]]:
        stream = self.endpoint.create_stream(shards)
        return stream, [d for _k, d in write(self.endpoint, stream, records, tag=tag)]


@pytest.fixture(scope="module")
def kinesis() -> Iterator[ProxiedKinesis]:
    try:
        endpoint = start_kinesalite()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    host, port = endpoint.url.removeprefix("http://").rsplit(":", 1)
    proxy = FaultProxy(host, int(port)).start()
    try:
        yield ProxiedKinesis(endpoint, proxy)
    finally:
        proxy.stop()
        endpoint.stop()


@pytest.fixture(autouse=True)
def _healthy(kinesis: ProxiedKinesis) -> Iterator[None]:
    with healthy([kinesis.proxy]):
        yield


def _read(spark: Any, opts: dict[str, str]) -> list[Any]:
    return spark.read.format(FORMAT).options(**opts).load().collect()


def _to_parquet(spark: Any, opts: dict[str, str], out: Path, trigger: dict[str, Any]) -> Any:
    return to_parquet(
        spark.readStream.format(FORMAT).options(**opts).load().select("data", "shardId", "sequenceNumber"),
        out,
        trigger,
    )


def test_latency_and_resets_batch_and_streaming(spark: Any, kinesis: ProxiedKinesis, tmp_path: Path) -> None:
    stream, values = kinesis.stream(2, 3000, "a")
    opts = kinesis.options(stream, maxRecordsPerFetch="500")  # many calls: resets land inside a read
    kinesis.proxy.set_latency(0.01)
    with ResetsWhileReading(kinesis.proxy, times=3, every_bytes=80_000) as resets:
        _assert_exactly(_read(spark, opts), values)
    assert resets.left == 0, "the batch read ended before it was reset 3 times"
    with ResetsWhileReading(kinesis.proxy, times=3, every_bytes=80_000) as resets:
        q = _to_parquet(spark, {**opts, "maxRecordsPerTrigger": "1500"}, tmp_path, {"availableNow": True})
        assert q.awaitTermination(180)
        assert q.exception() is None, q.exception()
    assert resets.left == 0, "the streaming read ended before it was reset 3 times"
    _assert_exactly(_parquet(spark, tmp_path), values)


@pytest.mark.timeout(420)
def test_unreachable_for_seconds_then_back(spark: Any, kinesis: ProxiedKinesis, tmp_path: Path) -> None:
    """Refused for 8 s in a running query: inside networkTimeoutMs, so the query rides it out."""
    stream, values = kinesis.stream(2, 1000, "a")
    opts = kinesis.options(stream, readTimeoutMs="3000", networkTimeoutMs="60000")
    q = _to_parquet(spark, opts, tmp_path, {"processingTime": "500 milliseconds"})
    try:
        _wait_parquet(spark, tmp_path, 1000, q, 150)
        kinesis.proxy.refuse(8)
        more = [d for _k, d in write(kinesis.endpoint, stream, 1000, tag="b")]
        time.sleep(9)
        assert q.isActive and q.exception() is None, "the query did not wait out an 8 s outage"
        _wait_parquet(spark, tmp_path, 2000, q, 150)
        time.sleep(1.5)
        rows = _parquet(spark, tmp_path)
    finally:
        q.stop()
    _assert_exactly(rows, values + more)


@pytest.mark.timeout(420)
def test_half_open_connections_are_left_after_read_timeout(
    spark: Any, kinesis: ProxiedKinesis, tmp_path: Path
) -> None:
    """Answers vanish on the open connections (nothing closes them): readTimeoutMs ends each call."""
    stream, values = kinesis.stream(2, 1000, "a")
    opts = kinesis.options(stream, readTimeoutMs="3000", networkTimeoutMs="60000")
    q = _to_parquet(spark, opts, tmp_path, {"processingTime": "500 milliseconds"})
    try:
        _wait_parquet(spark, tmp_path, 1000, q, 150)
        assert kinesis.proxy.half_open(Direction.DOWNSTREAM) > 0
        more = [d for _k, d in write(kinesis.endpoint, stream, 1000, tag="b")]
        _wait_parquet(spark, tmp_path, 2000, q, 150)
        time.sleep(1.5)
        rows = _parquet(spark, tmp_path)
    finally:
        q.stop()
    _assert_exactly(rows, values + more)


def test_outage_beyond_network_timeout_fails_clearly(
    spark: Any, kinesis: ProxiedKinesis, tmp_path: Path
) -> None:
    stream, values = kinesis.stream(1, 100, "a")
    opts = kinesis.options(stream, **FAST_FAILURE)
    kinesis.proxy.refuse()
    began = time.monotonic()
    with pytest.raises(Exception, match="networkTimeoutMs") as failure:
        _read(spark, opts)
    assert time.monotonic() - began < 60
    assert "endpoint" not in str(failure.value).lower() or kinesis.proxy.address in str(failure.value)
    kinesis.proxy.restore()
    q = _to_parquet(spark, opts, tmp_path, {"processingTime": "500 milliseconds"})
    try:
        _wait_parquet(spark, tmp_path, 100, q, 120)
        kinesis.proxy.blackhole()  # for good
        began = time.monotonic()
        ended = terminated(q, 90)
        took = time.monotonic() - began
    finally:
        q.stop()
    assert ended, "the query still runs 90 s into an outage whose bound is 3 s"
    assert took < 60, f"took {took:.1f}s"
    assert "networkTimeoutMs" in str(q.exception()), q.exception()
    print(f"streaming query failed after {took:.1f}s")
