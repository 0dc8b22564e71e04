"""A Spark driver for the event-time cut's kill test: ``kafka-unified`` with ``eventTime.alignment=cut``
-> Parquet, ``Trigger.AvailableNow``, restartable from its checkpoint.

    python event_time_driver.py BOOTSTRAP TOPIC OUTPUT CHECKPOINT

Prints ``STARTED`` once the query runs and ``DONE`` when it has read all the data.
"""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(
    0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
)

MAX_OFFSETS = "500"


def start_cut_query(spark: Any, bootstrap: str, topic: str, output: str, checkpoint: str) -> Any:
    """The query, to the end of the data (``Trigger.AvailableNow``)."""
    df = (
        spark.readStream.format("kafka-unified")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", MAX_OFFSETS)
        .option("eventTime.alignment", "cut")
        .option("alignment.maxDrift", "1m")
        .load()
        .selectExpr("partition", "offset", "timestamp")
    )
    return (
        df.writeStream.format("parquet")
        .option("path", output)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )


def main() -> None:
    """Run the query to its end."""
    bootstrap, topic, output, checkpoint = sys.argv[1:5]
    from connector_base.spark import local_spark_session

    spark = local_spark_session("kafka-event-time-kill-test", cores=2)
    spark.sparkContext.setLogLevel("ERROR")
    query = start_cut_query(spark, bootstrap, topic, output, checkpoint)
    print("STARTED", flush=True)
    query.awaitTermination()
    if query.exception() is not None:
        raise SystemExit(f"query failed: {query.exception()}")
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
