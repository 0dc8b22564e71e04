"""A driver process for the kill-and-restart test: streams a source into a Parquet sink.

Usage: python kill_driver.py <format> <checkpoint dir> <output dir> <options json>
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    fmt, checkpoint, output, options = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    from connector_base.spark import local_spark_session

    spark = local_spark_session("kill-test", cores=2)
    spark.sparkContext.setLogLevel("ERROR")
    query = (
        spark.readStream.format(fmt)
        .options(**options)
        .load()
        .writeStream.format("parquet")
        .option("path", output)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    print("DONE", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
