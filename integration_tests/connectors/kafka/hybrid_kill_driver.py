"""A Spark driver for the hybrid kill test: ``hybrid`` (files, then Kafka) -> Parquet, restartable.

    python hybrid_kill_driver.py OPTIONS_JSON OUTPUT CHECKPOINT [--available-now]

Prints ``STARTED`` once the query runs; without ``--available-now`` it runs until killed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(
    0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
)


def main() -> None:
    """Run the query."""
    parser = argparse.ArgumentParser()
    for name in ("options", "output", "checkpoint"):
        parser.add_argument(name)
    parser.add_argument("--available-now", action="store_true")
    args = parser.parse_args()
    from connector_base.spark import local_spark_session

    spark = local_spark_session("hybrid-kill-test", cores=2)
    spark.sparkContext.setLogLevel("ERROR")
    df = (
        spark.readStream.format("hybrid")
        .options(**json.loads(args.options))
        .load()
        .selectExpr("value", "partition", "offset")
    )
    writer = (
        df.writeStream.format("parquet")
        .option("path", args.output)
        .option("checkpointLocation", args.checkpoint)
    )
    if args.available_now:
        query = writer.trigger(availableNow=True).start()
        print("STARTED", flush=True)
        query.awaitTermination()
        if query.exception() is not None:
            raise SystemExit(f"query failed: {query.exception()}")
        print("DONE", flush=True)
        return
    # one trigger a second: the test kills the driver within that second of the switch batch
    query = writer.trigger(processingTime="1 second").start()
    print("STARTED", flush=True)
    while True:
        time.sleep(1)
        if query.exception() is not None:
            raise SystemExit(f"query failed: {query.exception()}")


if __name__ == "__main__":
    main()
