"""The Pravega demo: events keep arriving (and the stream scales) while a ``pravega`` query reads them.

Runs on the emulator (a child process). A writer process (the official client, in its own process
because it holds the GIL while blocking) writes JSON events ``{"id", "user", "amount"}`` with the
user as routing key every 200 ms; half-way the demo splits a segment. The streaming query parses the
events and the demo checks every event arrived exactly once. Wire it into ``python -m
demos`` with ``SYSTEMS["pravega"] = "demos.pravega_demo"``.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import shutil
import tempfile
import time
from typing import Any

__all__ = ["run"]

EVENTS_PER_ROUND = 500
ROUND_S = 0.2


def _create(uri: str, scope: str, stream: str) -> None:
    """Create the scope and a 2-segment stream (child process)."""
    from connectors.pravega.controller_client import ConnectionSettings, ControllerClient

    controller = ControllerClient(ConnectionSettings(uri))
    try:
        controller.create_scope(scope)
        controller.create_stream(scope, stream, 2)
    finally:
        controller.close()


def _produce(uri: str, scope: str, stream: str, seconds: float, written: Any, scaled: Any) -> None:
    """Write events until ``seconds`` passed (child process)."""
    from connectors.pravega.controller_client import ConnectionSettings
    from connectors.pravega.event_writer import PravegaEventWriter

    writer = PravegaEventWriter(ConnectionSettings(uri), scope, stream)
    rnd = random.Random(7)
    next_id = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for _ in range(EVENTS_PER_ROUND):
            user = f"user-{rnd.randrange(50)}"
            event = {"id": next_id, "user": user, "amount": round(rnd.uniform(1, 500), 2)}
            writer.write(json.dumps(event).encode(), user)
            next_id += 1
        writer.flush()
        written.value = next_id
        time.sleep(ROUND_S)


def run(seconds: float) -> int:
    """Start the emulator, stream, print progress and the final counts; 0 when every event arrived once."""
    from connector_base.spark import local_spark_session
    from demos.progress import follow_then_stop, memory_query, report
    from sparkflow_testing.pravega.cluster import start_emulator

    work = tempfile.mkdtemp(prefix="sparkflow-pravega-demo-")
    with start_emulator() as emulator:
        cluster = emulator.cluster
        scope, stream = "demo", "payments"
        _create(cluster.controller_uri, scope, stream)
        print(f"demo: Pravega emulator at {cluster.controller_uri}, stream {scope}/{stream} (2 segments)")
        ctx = multiprocessing.get_context("spawn")
        written, scaled = ctx.Value("q", 0), ctx.Value("b", False)
        producer = ctx.Process(
            target=_produce,
            args=(cluster.controller_uri, scope, stream, seconds, written, scaled),
            daemon=True,
        )
        spark = local_spark_session("sparkflow-pravega-demo")
        spark.sparkContext.setLogLevel("ERROR")
        events = (
            spark.readStream.format("pravega")
            .option("controller", cluster.controller_uri)
            .option("scope", scope)
            .option("stream", stream)
            .option("maxEventsPerTrigger", "5000")
            .load()
            .selectExpr("from_json(cast(event as string), 'id long, user string, amount double') as e")
            .select("e.*")
        )
        query = memory_query(events, "payments", f"{work}/checkpoint")
        producer.start()  # after Spark started its Python workers
        started = time.monotonic()

        def producing() -> bool:
            if not scaled.value and time.monotonic() - started > seconds / 2:
                first = cluster.control.active_segments(scope, stream)[0]["id"]
                cluster.control.split(scope, stream, first)
                scaled.value = True
                print(f"demo: split segment {first} while the query runs")
            return producer.is_alive()

        batches = follow_then_stop(
            query, spark, "payments", lambda: int(written.value), producing, lambda: producer.join(10)
        )
        status = report(spark, "payments", int(written.value), batches) if written.value else 1
        spark.stop()
    shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    import sys

    sys.exit(run(float(sys.argv[1]) if len(sys.argv) > 1 else 20.0))
