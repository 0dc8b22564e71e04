"""The files demo: jsonl files keep arriving while a ``files-unified`` streaming query reads them."""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import threading
import time

from connector_base.spark import local_spark_session
from demos.progress import follow_then_stop, memory_query, report

FILES_UP_FRONT = 5
ROWS_PER_FILE = 2_000


def _write_file(directory: str, index: int, rnd: random.Random) -> int:
    """Write one jsonl file atomically (temp name, then rename) and return its row count."""
    rows = [
        {
            "id": index * ROWS_PER_FILE + i,
            "user": f"user-{rnd.randrange(50)}",
            "amount": round(rnd.uniform(1, 500), 2),
        }
        for i in range(ROWS_PER_FILE)
    ]
    tmp = os.path.join(directory, f".events-{index:05d}.jsonl.tmp")
    with open(tmp, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    os.replace(tmp, os.path.join(directory, f"events-{index:05d}.jsonl"))
    return len(rows)


def run(seconds: float) -> int:
    """Generate data, stream it, print progress and the final counts; 0 when every row arrived once."""
    work = tempfile.mkdtemp(prefix="sparkflow-demo-")
    data, checkpoint = os.path.join(work, "events"), os.path.join(work, "checkpoint")
    os.makedirs(data)
    rnd = random.Random(7)
    written = sum(_write_file(data, i, rnd) for i in range(FILES_UP_FRONT))
    print(f"demo: {FILES_UP_FRONT} jsonl files in {data}; more arrive every second for {seconds:.0f}s")

    spark = local_spark_session("sparkflow-demo")
    spark.sparkContext.setLogLevel("ERROR")
    events = (
        spark.readStream.format("files-unified")
        .option("path", data)
        .option("format", "jsonl")
        .option("continuous", "true")
        .option("discoveryIntervalMs", "500")
        .option("maxFilesPerTrigger", "3")
        .schema("id long, user string, amount double")
        .load()
    )
    query = memory_query(events, "events", checkpoint)
    stop = threading.Event()
    count = {"written": written}

    def produce() -> None:
        index = FILES_UP_FRONT
        deadline = time.monotonic() + seconds
        while not stop.is_set() and time.monotonic() < deadline:
            count["written"] += _write_file(data, index, rnd)
            index += 1
            stop.wait(1.0)

    producer = threading.Thread(target=produce, name="demo-producer", daemon=True)
    producer.start()
    batches = follow_then_stop(query, spark, "events", lambda: count["written"], producer.is_alive, stop.set)
    status = report(spark, "events", count["written"], batches)
    spark.stop()
    shutil.rmtree(work, ignore_errors=True)
    return status
