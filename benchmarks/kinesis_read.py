"""Benchmark: a bounded read through Spark ``kinesis-unified`` against a plain boto3 GetRecords loop.

On one endpoint in one run: ``--records`` records (default 200,000) of ``--size`` bytes (100) over
``--shards`` shards (4) are read (a) through Spark ``local[2]`` with ``kinesis-unified`` (counting
records and summing the data lengths) and (b) by a plain boto3 loop in this process
(GetShardIterator TRIM_HORIZON + GetRecords with ``Limit=10000`` per shard until the tip, summing
the data lengths). Prints records/s of both and the ratio. Each side runs ``--rounds`` times
(default 2) and the best round counts.

    python -m benchmarks.kinesis_read                      # a local moto server
    python -m benchmarks.kinesis_read --records 20000      # quick run
    python -m benchmarks.kinesis_read --endpoint kinesalite
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sparkflow_testing.kinesis.endpoint import KinesisEndpoint, start_endpoint  # noqa: E402

GET_RECORDS_LIMIT = 10_000


def produce(endpoint: KinesisEndpoint, stream: str, records: int, size: int) -> None:
    """Put ``records`` distinct values of ``size`` bytes with spread partition keys."""
    pad = os.urandom(size)
    batch: list[tuple[str, bytes]] = []
    for i in range(records):
        batch.append((f"key-{i}", (b"%010d" % i) + pad[10:]))
        if len(batch) == 5000:
            endpoint.put_records(stream, batch)
            batch = []
    if batch:
        endpoint.put_records(stream, batch)


def plain_loop(endpoint: KinesisEndpoint, stream: str) -> tuple[float, int, int]:
    """Seconds to read every shard with GetShardIterator + GetRecords, the record count and data bytes."""
    import boto3

    client = boto3.client(
        "kinesis",
        endpoint_url=endpoint.url,
        region_name=endpoint.region,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    start = time.perf_counter()
    seen = total = 0
    for shard in client.list_shards(StreamName=stream)["Shards"]:
        it = client.get_shard_iterator(
            StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        while it:
            resp = client.get_records(ShardIterator=it, Limit=GET_RECORDS_LIMIT)
            records = resp["Records"]
            seen += len(records)
            total += sum(len(r["Data"]) for r in records)
            if not records and resp.get("MillisBehindLatest", 0) == 0:
                break
            it = resp.get("NextShardIterator")
    return time.perf_counter() - start, seen, total


def spark_read(spark: Any, endpoint: KinesisEndpoint, stream: str) -> tuple[float, int, int]:
    """Seconds for a bounded ``kinesis-unified`` read that counts records and sums the data lengths."""
    start = time.perf_counter()
    df = (
        spark.read.format("kinesis-unified")
        .options(
            **endpoint.options(streamName=stream, startingPosition="TRIM_HORIZON", cutSafetyMarginMs="0")
        )
        .load()
    )
    row = df.selectExpr("count(*) as n", "sum(length(data)) as bytes").collect()[0]
    return time.perf_counter() - start, int(row["n"]), int(row["bytes"] or 0)


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--endpoint", default="moto", choices=["moto", "kinesalite", "localstack"])
    args = parser.parse_args()

    endpoint = start_endpoint(args.endpoint)
    try:
        stream = endpoint.create_stream(args.shards)
        t0 = time.perf_counter()
        produce(endpoint, stream, args.records, args.size)
        print(
            f"put {args.records:,} records of {args.size} B over {args.shards} shards in "
            f"{time.perf_counter() - t0:.1f}s ({endpoint.kind} at {endpoint.url})",
            flush=True,
        )

        from connector_base.spark import local_spark_session

        spark = local_spark_session("kinesis-read-benchmark", cores=2)
        spark.sparkContext.setLogLevel("ERROR")
        warm = endpoint.create_stream(1)  # start Spark's Python workers outside the timing
        endpoint.put_records(warm, [("k", b"x")] * 10)
        spark_read(spark, endpoint, warm)

        plain: list[float] = []
        via_spark: list[float] = []
        for r in range(args.rounds):
            seconds, n_plain, plain_bytes = plain_loop(endpoint, stream)
            plain.append(seconds)
            seconds, n_spark, spark_bytes = spark_read(spark, endpoint, stream)
            via_spark.append(seconds)
            if n_plain != args.records or n_spark != args.records or plain_bytes != spark_bytes:
                raise AssertionError(f"plain read {n_plain}, Spark read {n_spark}, expected {args.records}")
            print(
                f"round {r + 1}: plain boto3 loop {plain[-1]:.2f}s, "
                f"Spark kinesis-unified {via_spark[-1]:.2f}s",
                flush=True,
            )
        plain_rate = args.records / min(plain)
        spark_rate = args.records / min(via_spark)
        print(f"plain boto3 GetRecords loop (1 process): {plain_rate:,.0f} records/s")
        print(f"Spark local[2] kinesis-unified:          {spark_rate:,.0f} records/s")
        print(f"ratio Spark / plain: {spark_rate / plain_rate:.2f}x  (target >= 1.0x)")
        spark.stop()
    finally:
        endpoint.stop()


if __name__ == "__main__":
    main()
