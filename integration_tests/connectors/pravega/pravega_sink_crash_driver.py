"""A Spark driver for the sink driver-kill test: Pravega -> Pravega with ``exactly_once=true``.

Usage: python pravega_sink_crash_driver.py <options json> <checkpoint> [crash batch [after-commit|after-log]]

Reads the input stream in micro-batches of at most 500 events (``Trigger.AvailableNow``) and
writes the events to the output stream. With a crash batch, the sink's driver-side ``commit`` of
that batch SIGKILLs the driver's whole process group (the driver, its JVM and every Python worker)
right after the batch's transactions committed: before Spark logs the batch as committed, so the
restarted query re-runs it. With ``after-log`` it dies instead right after the sink wrote the batch's
transaction log record, before any transaction is committed. Prints ``DONE`` when the query finished.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any


def main() -> None:
    options: dict[str, Any] = json.loads(sys.argv[1])
    checkpoint = sys.argv[2]
    crash_batch = int(sys.argv[3]) if len(sys.argv) > 3 else None
    mode = sys.argv[4] if len(sys.argv) > 4 else "after-commit"
    from connector_base.spark import local_spark_session
    from connectors.pravega.datasource import PravegaDataSource
    from connectors.pravega.sink import PravegaStreamWriter

    spark = local_spark_session("pravega-sink-crash", cores=2)
    spark.sparkContext.setLogLevel("ERROR")

    driver_group = os.getpgrp()  # the commit runs in a Python worker of another process group

    class CrashingWriter(PravegaStreamWriter):
        def commit(self, messages: Any, batchId: int) -> None:  # noqa: N803
            if batchId == crash_batch and mode == "after-log":
                from connectors.pravega import sink, txn_log

                class DyingLog(txn_log.TransactionLog):
                    def put(self, batch_id: int, txn_ids: Any) -> None:
                        super().put(batch_id, txn_ids)
                        os.killpg(driver_group, signal.SIGKILL)
                        os.kill(os.getpid(), signal.SIGKILL)  # this worker too, before it commits

                sink.TransactionLog = DyingLog  # type: ignore[misc]
            super().commit(messages, batchId)
            if batchId == crash_batch:
                os.killpg(driver_group, signal.SIGKILL)

    class CrashingPravega(PravegaDataSource):
        @classmethod
        def name(cls) -> str:
            return "pravega-crash-after-commit"

        def streamWriter(self, schema: Any, overwrite: bool) -> Any:  # noqa: N802
            return CrashingWriter(self._sink_options(schema), schema)

    spark.dataSource.register(CrashingPravega)
    query = (
        spark.readStream.format("pravega")
        .options(**options["source"], maxEventsPerTrigger="500")
        .load()
        .select("event")
        .writeStream.format("pravega-crash-after-commit" if crash_batch is not None else "pravega")
        .options(**options["sink"], exactly_once="true")
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(600)
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
