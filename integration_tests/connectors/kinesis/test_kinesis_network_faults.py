"""Network faults between the connector and Kinesis (kinesalite), through a ``FaultProxy``.

kinesalite speaks HTTP at one URL, so a plain TCP proxy in front of it carries every call of the
driver and the executors. One kinesalite and one proxy for this module; test data is written past
the proxy. Each test checks that nothing is lost or duplicated, or that an outage longer than
``networkTimeoutMs`` ends the query with a clear error in bounded time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from connectors.testing.fault_proxy import Direction, FaultProxy
from connectors.testing.kinesis_endpoint import KinesisEndpoint, start_kinesalite
from integration_tests.connectors.kinesis.helpers import options, write

pytestmark = [pytest.mark.spark, pytest.mark.integration]

FORMAT = "kinesis-unified"
SINK_SCHEMA = "data binary, shardId string, sequenceNumber string"
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
    kinesis.proxy.restore()
    kinesis.proxy.set_latency(0)
    yield
    kinesis.proxy.restore()
    kinesis.proxy.set_latency(0)


def _read(spark: Any, opts: dict[str, str]) -> list[Any]:
    return spark.read.format(FORMAT).options(**opts).load().collect()


def _to_parquet(spark: Any, opts: dict[str, str], out: Path, trigger: dict[str, Any]) -> Any:
    writer = (
        spark.readStream.format(FORMAT)
        .options(**opts)
        .load()
        .select("data", "shardId", "sequenceNumber")
        .writeStream.format("parquet")
        .option("path", str(out / "data"))
        .option("checkpointLocation", str(out / "chk"))
        .trigger(**trigger)
    )
    return _started(writer.start)


WORKER_START_FAILURE = "Python worker failed to connect back"
"""Spark's own start-up failure on an overloaded machine (the worker takes over 10 s to start)."""


def _started(start: Any) -> Any:
    """``start()`` a streaming query, again (same checkpoint) if its Python worker never started."""
    for _attempt in range(3):
        query = start()
        while query.isActive and not query.recentProgress:
            time.sleep(0.2)
        error = query.exception()
        if error is None or WORKER_START_FAILURE not in str(error) or query.recentProgress:
            return query
    return query


def _terminated(query: Any, timeout_s: float) -> bool:
    """Whether ``query`` ended within ``timeout_s`` (``awaitTermination`` raises when it failed)."""
    try:
        return bool(query.awaitTermination(timeout_s))
    except Exception:  # StreamingQueryException: it ended, with the error the test looks at
        return True


def _parquet(spark: Any, out: Path) -> list[Any]:
    return spark.read.schema(SINK_SCHEMA).parquet(str(out / "data")).collect()


def _wait_parquet(spark: Any, out: Path, count: int, query: Any, timeout_s: float) -> list[Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert query.exception() is None, f"query failed: {query.exception()}"
        if (out / "data" / "_spark_metadata").exists():
            rows = _parquet(spark, out)
            if len(rows) >= count:
                return rows
        time.sleep(0.5)
    raise AssertionError(f"fewer than {count} rows after {timeout_s}s")


def _assert_exactly(rows: list[Any], values: list[bytes]) -> None:
    got = [bytes(r["data"]) for r in rows]
    assert len(got) == len(set(got)), f"{len(got) - len(set(got))} duplicated records"
    missing = set(values) - set(got)
    assert not missing, f"{len(missing)} records lost"
    assert len(got) == len(values)


class _Resets:
    """Resets every connection each time ``every_bytes`` more have come down the proxy, ``times`` times."""

    def __init__(self, proxy: FaultProxy, times: int, every_bytes: int) -> None:
        self.proxy, self.left, self.every = proxy, times, every_bytes
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        mark = self.proxy.stats().bytes_down
        while self.left and not self.done.wait(0.02):
            if self.proxy.stats().bytes_down - mark >= self.every and self.proxy.reset_all():
                self.left -= 1
                mark = self.proxy.stats().bytes_down

    def __enter__(self) -> _Resets:
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


def test_latency_and_resets_batch_and_streaming(spark: Any, kinesis: ProxiedKinesis, tmp_path: Path) -> None:
    stream, values = kinesis.stream(2, 3000, "a")
    opts = kinesis.options(stream, maxRecordsPerFetch="500")  # many calls: resets land inside a read
    kinesis.proxy.set_latency(0.01)
    with _Resets(kinesis.proxy, times=3, every_bytes=80_000) as resets:
        _assert_exactly(_read(spark, opts), values)
    assert resets.left == 0, "the batch read ended before it was reset 3 times"
    with _Resets(kinesis.proxy, times=3, every_bytes=80_000) as resets:
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
        ended = _terminated(q, 90)
        took = time.monotonic() - began
    finally:
        q.stop()
    assert ended, "the query still runs 90 s into an outage whose bound is 3 s"
    assert took < 60, f"took {took:.1f}s"
    assert "networkTimeoutMs" in str(q.exception()), q.exception()
    print(f"streaming query failed after {took:.1f}s")
