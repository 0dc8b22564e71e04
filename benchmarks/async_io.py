"""Async I/O throughput per task against a 10 ms HTTP service, next to the synchronous alternatives.

One Spark task (one partition) calls the scripted aiohttp service for every row:
  - ``ordered_wait`` with ``capacity`` C, against the ideal 0.8 x C / latency, once with aiohttp's
    client and once with a bare asyncio-streams client (far less CPU per call, so the operator's
    own cost shows where aiohttp's would hide it);
  - a bare aiohttp client without Spark, at the same concurrency (the machine's ceiling);
  - a plain Python UDF (one blocking call at a time);
  - an Arrow Python UDF with ``spark.sql.execution.pythonUDF.arrow.concurrency.level`` = C (a thread
    pool per Arrow batch).
Each variant runs once to warm the workers, then is timed; the ratios are printed in one run.

    python -m benchmarks.async_io [--capacity 64] [--latency-ms 10] [--rows 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from typing import Any

from connector_base.async_io import ordered_wait
from connector_base.spark import local_spark_session
from sparkflow_testing.services.async_lookups import BlockingHttpLookup, HttpLookup, StreamHttpLookup
from sparkflow_testing.services.scripted_http_service import start_http_service

CONCURRENCY_CONF = "spark.sql.execution.pythonUDF.arrow.concurrency.level"


def _timed(spark: Any, build: Any, rows: int) -> float:
    """Rows per second of ``build(df)`` over ``rows`` rows in one partition (after a warm-up run)."""
    build(spark.range(0, max(50, rows // 20), numPartitions=1)).write.format("noop").mode("overwrite").save()
    df = build(spark.range(0, rows, numPartitions=1))
    start = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    return rows / (time.perf_counter() - start)


async def _client_ceiling(url: str, capacity: int, requests: int) -> float:
    """Requests per second of a bare aiohttp client, ``capacity`` at a time, in this process."""
    import aiohttp

    gate = asyncio.Semaphore(capacity)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one(i: int) -> None:
            async with gate, session.get(f"{url}/lookup?id={i}") as response:
                await response.read()

        await asyncio.gather(*(one(i) for i in range(capacity)))
        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(requests)))
        return requests / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    """Run the three variants and print their throughput and the ratios."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.async_io")
    parser.add_argument("--capacity", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=10.0)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--sync-rows", type=int, default=300)
    args = parser.parse_args(argv)
    capacity, latency_s = args.capacity, args.latency_ms / 1000.0

    service = start_http_service(args.latency_ms)
    spark = local_spark_session("bench-async-io")
    spark.sparkContext.setLogLevel("ERROR")
    try:
        from pyspark.sql.functions import col, udf

        supported = _conf_known()
        blocking = BlockingHttpLookup(service.url)

        def async_io(df: Any) -> Any:
            fn = HttpLookup(service.url)
            return ordered_wait(df, fn, "id long, value string, attempt int", timeout=30.0, capacity=capacity)

        def async_io_streams(df: Any) -> Any:
            fn = StreamHttpLookup(service.url)
            return ordered_wait(df, fn, "id long, value string, attempt int", timeout=30.0, capacity=capacity)

        def plain_udf(df: Any) -> Any:
            return df.select(col("id"), udf(blocking, "string", useArrow=False)(col("id")).alias("value"))

        def arrow_udf(df: Any) -> Any:
            return df.select(col("id"), udf(blocking, "string", useArrow=True)(col("id")).alias("value"))

        rate_async = _timed(spark, async_io, args.rows)
        rate_streams = _timed(spark, async_io_streams, args.rows)
        rate_sync = _timed(spark, plain_udf, args.sync_rows)
        rate_threads = None
        if supported:
            spark.conf.set(CONCURRENCY_CONF, str(capacity))
            try:
                rate_threads = _timed(spark, arrow_udf, args.rows)
            finally:
                spark.conf.unset(CONCURRENCY_CONF)
        ceiling = asyncio.run(_client_ceiling(service.url, capacity, args.rows // 4))
        ideal = 0.8 * capacity / latency_s
        lines = [
            f"service latency {args.latency_ms:.0f} ms, capacity {capacity}, one task, "
            f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
            f"  ordered_wait               {rate_async:9,.0f} rows/s = "
            f"{rate_async / ideal:.2f} x 0.8*C/latency ({ideal:,.0f})",
            f"  ordered_wait, streams client{rate_streams:9,.0f} rows/s = "
            f"{rate_streams / ideal:.2f} x 0.8*C/latency, {rate_streams / rate_sync:.1f}x the plain UDF"
            + ("" if rate_threads is None else f", {rate_streams / rate_threads:.2f}x the Arrow UDF"),
            f"  aiohttp alone, no Spark    {ceiling:9,.0f} rows/s (this machine's client + service ceiling)",
            f"  plain Python UDF           {rate_sync:9,.0f} rows/s: "
            f"ordered_wait is {rate_async / rate_sync:.1f}x",
        ]
        if rate_threads is None:
            lines.append(f"  {CONCURRENCY_CONF} is not read by this pyspark: no comparison")
        else:
            lines.append(
                f"  Arrow UDF, concurrency {capacity:<3} {rate_threads:9,.0f} rows/s: "
                f"ordered_wait is {rate_async / rate_threads:.2f}x"
            )
        print("\n".join(lines), flush=True)
        return 0
    finally:
        spark.stop()
        service.stop()


def _conf_known() -> bool:
    """Whether the installed pyspark's worker reads the UDF concurrency setting."""
    import inspect

    import pyspark.worker

    return CONCURRENCY_CONF in inspect.getsource(pyspark.worker)


if __name__ == "__main__":
    sys.exit(main())
