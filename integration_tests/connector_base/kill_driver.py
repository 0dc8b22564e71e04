"""A Spark driver for the kill-and-restart tests of every connector: a stream into a Parquet sink.

    python kill_driver.py FORMAT CHECKPOINT OUTPUT OPTIONS_JSON [--columns a,b] [--trigger-ms N]
                          [--sink FORMAT --sink-options JSON]

Reads ``FORMAT`` with the options (a JSON object) and writes the columns (all by default) to
Parquet at ``OUTPUT`` (or to the ``--sink`` format with ``--sink-options``; then ``OUTPUT`` is
unused), restartable from ``CHECKPOINT``. Prints ``STARTED`` once the query runs.
With ``--trigger-ms`` it triggers every N ms until killed; without, it runs ``availableNow`` and
prints ``DONE`` when that ends (exit status 1 if the query failed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def main() -> None:
    """Run the query."""
    parser = argparse.ArgumentParser()
    for name in ("format", "checkpoint", "output", "options"):
        parser.add_argument(name)
    parser.add_argument("--columns", help="comma-separated columns to write (default: all)")
    parser.add_argument("--trigger-ms", type=int, help="a processing-time trigger, run until killed")
    parser.add_argument("--sink", default="parquet", help="the sink's format (default: Parquet at OUTPUT)")
    parser.add_argument("--sink-options", default="{}", help="the sink's options (a JSON object)")
    args = parser.parse_args()
    from connector_base.spark import local_spark_session

    spark = local_spark_session(f"{args.format}-kill-test", cores=2)
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.readStream.format(args.format).options(**json.loads(args.options)).load()
    if args.columns:
        df = df.select(*args.columns.split(","))
    sink_options = json.loads(args.sink_options) if args.sink != "parquet" else {"path": args.output}
    writer = (
        df.writeStream.format(args.sink).options(**sink_options).option("checkpointLocation", args.checkpoint)
    )
    if args.trigger_ms is None:
        query = writer.trigger(availableNow=True).start()
        print("STARTED", flush=True)
        query.awaitTermination()
        if query.exception() is not None:
            raise SystemExit(f"query failed: {query.exception()}")
        print("DONE", flush=True)
        spark.stop()
        return
    query = writer.trigger(processingTime=f"{args.trigger_ms} milliseconds").start()
    print("STARTED", flush=True)
    while True:
        time.sleep(1)
        if query.exception() is not None:
            raise SystemExit(f"query failed: {query.exception()}")


if __name__ == "__main__":
    main()
