"""A driver process for the Kinesis kill-and-restart test: streams a stream into a Parquet sink.

Usage: python kinesis_kill_driver.py <checkpoint dir> <output dir> <options json>
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    checkpoint, output, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    from connector_base.spark import local_spark_session

    spark = local_spark_session("kinesis-kill-test", cores=2)
    spark.sparkContext.setLogLevel("ERROR")
    query = (
        spark.readStream.format("kinesis-unified")
        .options(**options)
        .load()
        .selectExpr("data", "partitionKey", "shardId", "sequenceNumber")
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
