"""A Spark driver for the sink kill test: writes N events; attempt 0 of partition 1 SIGKILLs its worker.

Usage: python pravega_sink_driver.py <controller> <scope> <stream> <exactly_once> <events>
The session is ``local[2,4]`` so Spark retries the killed task, as a cluster would.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator

import pyarrow as pa

PARTITIONS = 4


def produce(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Events ``e:<id>``; the first attempt of partition 1 dies half-way, after a pause."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    die = ctx is not None and ctx.partitionId() == 1 and ctx.attemptNumber() == 0
    for batch in batches:
        ids = batch.column(0).to_pylist()
        events = [f"e:{i:08d}" for i in ids]
        keys = [f"k{i % 7}" for i in ids]
        half = len(events) // 2
        yield pa.RecordBatch.from_arrays(
            [pa.array(events[:half]), pa.array(keys[:half])], names=["event", "routing_key"]
        )
        if die:
            time.sleep(1.5)  # let the writer send the first half
            marker = os.environ.get("PRAVEGA_KILL_MARKER")
            if marker:
                with open(marker, "w") as f:
                    f.write("killed")
            os.kill(os.getpid(), signal.SIGKILL)
        yield pa.RecordBatch.from_arrays(
            [pa.array(events[half:]), pa.array(keys[half:])], names=["event", "routing_key"]
        )


def main() -> None:
    controller, scope, stream, exactly_once, events = sys.argv[1:6]
    from connector_base.spark import ensure_pyspark_python

    ensure_pyspark_python()
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2,4]")
        .appName("pravega-sink-kill")
        .config("spark.ui.enabled", "false")
        .config("spark.python.worker.reuse", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.range(0, int(events), numPartitions=PARTITIONS).mapInArrow(
        produce, "event string, routing_key string"
    )
    df.write.format("pravega").options(
        controller=controller, scope=scope, stream=stream, exactly_once=exactly_once
    ).mode("append").save()
    print("DONE", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
