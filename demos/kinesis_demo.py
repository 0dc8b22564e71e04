"""The Kinesis demo: a local endpoint, a producer process, a ``kinesis-unified`` streaming query."""

from __future__ import annotations

import json
import multiprocessing
import random
import shutil
import tempfile
import time
from typing import Any

from connector_base.spark import local_spark_session
from demos.progress import follow_then_stop, memory_query, report
from sparkflow_testing.kinesis.endpoint import start_demo_endpoint, stop_demo_endpoint

SHARDS = 2
RECORDS_PER_SECOND = 500


def _produce(options: dict[str, str], stream: str, seconds: float, produced: Any) -> None:
    """Put sample events with PutRecords for ``seconds`` (in its own process)."""
    import boto3

    client = boto3.client(
        "kinesis",
        endpoint_url=options["endpointUrl"],
        region_name=options["region"],
        aws_access_key_id=options["awsAccessKeyId"],
        aws_secret_access_key=options["awsSecretAccessKey"],
    )
    rnd = random.Random(7)
    n = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        tick = time.monotonic()
        entries = []
        for _ in range(RECORDS_PER_SECOND // 5):
            user = f"user-{rnd.randrange(50)}"
            event = {"id": n + len(entries), "user": user, "amount": round(rnd.uniform(1, 500), 2)}
            entries.append({"Data": json.dumps(event).encode(), "PartitionKey": user})
        while entries:  # retry the failed entries of a partial failure
            result = client.put_records(StreamName=stream, Records=entries)
            entries = [e for e, r in zip(entries, result["Records"], strict=True) if "ErrorCode" in r]
        n += RECORDS_PER_SECOND // 5
        produced.value = n
        time.sleep(max(0.0, 0.2 - (time.monotonic() - tick)))


def run(seconds: float) -> int:
    """Start an endpoint, produce for ``seconds`` while a query reads; 0 when every record arrived once."""
    work = tempfile.mkdtemp(prefix="sparkflow-kinesis-demo-")
    endpoint = start_demo_endpoint()
    print(f"demo: local Kinesis endpoint ({endpoint.kind}) at {endpoint.url}")
    spark = None
    try:
        stream = endpoint.create_stream(SHARDS, name="demo-events")
        options = endpoint.options(streamName=stream, startingPosition="TRIM_HORIZON")
        ctx = multiprocessing.get_context("spawn")
        produced = ctx.Value("q", 0)
        producer = ctx.Process(target=_produce, args=(options, stream, seconds, produced), daemon=True)
        producer.start()
        print(
            f"demo: putting ~{RECORDS_PER_SECOND} records/s into '{stream}' ({SHARDS} shards) "
            f"for {seconds:.0f}s"
        )
        spark = local_spark_session("sparkflow-kinesis-demo")
        spark.sparkContext.setLogLevel("ERROR")
        events = (
            spark.readStream.format("kinesis-unified")
            .options(**options)
            .load()
            .selectExpr("from_json(CAST(data AS STRING), 'id long, user string, amount double') AS e")
            .selectExpr("e.*")
        )
        query = memory_query(events, "events", f"{work}/checkpoint")
        batches = follow_then_stop(
            query, spark, "events", lambda: int(produced.value), producer.is_alive, lambda: producer.join(30)
        )
        return report(spark, "events", int(produced.value), batches)
    finally:
        if spark is not None:
            spark.stop()
        stop_demo_endpoint(endpoint)
        shutil.rmtree(work, ignore_errors=True)
