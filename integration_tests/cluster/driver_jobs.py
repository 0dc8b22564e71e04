"""Jobs the cluster tests run in the cluster driver, a spawned child with its own SparkSession.

PySpark allows one SparkContext per process and the rest of the suite shares a ``local[2]`` one, so
the application on the standalone cluster lives in a child process (``ClusterDriver`` in
conftest.py). Each function here runs there and returns plain picklable results.
"""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_SPARK: Any = None


def start_session(conf: dict[str, str], env: dict[str, str]) -> None:
    """Initializer of the driver child: ``env`` set, then the session on the cluster."""
    global _SPARK
    os.environ.update(env)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("sparkflow-cluster-tests")
    for key, value in conf.items():
        builder = builder.config(key, value)
    _SPARK = builder.getOrCreate()
    _SPARK.sparkContext.setLogLevel("ERROR")


def start_remote_session(url: str) -> None:
    """Initializer of a Spark Connect client child: a remote session (it switches this process to Connect)."""
    global _SPARK
    from pyspark.sql import SparkSession

    _SPARK = SparkSession.builder.remote(url).getOrCreate()


def call(job: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``job``; an error comes back as a picklable ``RuntimeError`` carrying Spark's message."""
    try:
        return job(*args, **kwargs)
    except Exception as e:  # Py4J and Spark errors hold locks and JVM handles: send their text
        raise RuntimeError(f"{type(e).__name__}: {e}\n{traceback.format_exc()[-4000:]}") from None


def stop_session() -> None:
    """Stop the session (the application leaves the cluster)."""
    if _SPARK is not None:
        _SPARK.stop()


def warm_up(executors: int) -> int:
    """Run a small job until ``executors`` executors have registered; returns how many did."""
    deadline = time.monotonic() + 120
    count = 0
    while time.monotonic() < deadline:
        count = len(_SPARK.sparkContext._jsc.sc().statusTracker().getExecutorInfos()) - 1  # minus the driver
        if count >= executors:
            break
        time.sleep(0.3)
    _SPARK.range(0, 4, numPartitions=2).count()
    return count


def _executor_pid_column(df: Any) -> Any:
    """``df`` plus ``executor_pid`` and ``task_partition`` columns, pipelined into the source's tasks."""
    import pyarrow as pa
    from pyspark.sql.types import IntegerType, StructField, StructType

    from sparkflow_testing.spark.cluster import executor_pid_of

    schema = StructType(
        [
            *df.schema.fields,
            StructField("executor_pid", IntegerType()),
            StructField("task_partition", IntegerType()),
        ]
    )  # a new StructType: add() would change the cached schema of ``df``

    def tag(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        pid = executor_pid_of(os.getpid()) or -1
        part = TaskContext.get().partitionId()  # type: ignore[union-attr]
        for b in batches:
            n = b.num_rows
            yield pa.RecordBatch.from_arrays(
                [*b.columns, pa.array([pid] * n, pa.int32()), pa.array([part] * n, pa.int32())],
                names=[*b.schema.names, "executor_pid", "task_partition"],
            )

    return df.mapInArrow(tag, schema)


# --- reads ---------------------------------------------------------------------------------------
def batch_read(
    fmt: str, options: dict[str, str], columns: list[str], schema: str | None = None
) -> dict[str, Any]:
    """``spark.read``: the rows' ``columns`` plus which executors and tasks read them."""
    reader = _SPARK.read.format(fmt).options(**options)
    if schema:
        reader = reader.schema(schema)
    rows = _executor_pid_column(reader.load()).collect()
    return {
        "rows": [tuple(_plain(r[c]) for c in columns) for r in rows],
        "executors": sorted({r["executor_pid"] for r in rows}),
        "tasks": sorted({r["task_partition"] for r in rows}),
    }


def stream_to_parquet(
    fmt: str,
    options: dict[str, str],
    columns: list[str],
    out: str,
    schema: str | None = None,
    pause_marker: str | None = None,
    pause_s: float = 0.0,
    timeout_s: float = 240.0,
) -> dict[str, Any]:
    """``readStream`` with ``Trigger.AvailableNow`` into a Parquet sink; returns what the sink holds.

    With ``pause_marker``, the first task to get there creates the file (holding its Python worker's
    pid) and sleeps ``pause_s`` inside the micro-batch, so a test can kill its executor meanwhile.
    """
    reader = _SPARK.readStream.format(fmt).options(**options)
    if schema:
        reader = reader.schema(schema)
    df = reader.load().select(*columns)
    if pause_marker:
        df = df.mapInArrow(_pausing(pause_marker, pause_s), df.schema)
    query = (
        df.writeStream.format("parquet")
        .option("path", os.path.join(out, "data"))
        .option("checkpointLocation", os.path.join(out, "chk"))
        .trigger(availableNow=True)
        .start()
    )
    finished = query.awaitTermination(timeout_s)
    if not finished:
        query.stop()
        raise TimeoutError(f"the query did not finish within {timeout_s}s")
    if query.exception() is not None:
        raise RuntimeError(f"query failed: {query.exception()}")
    rows = _SPARK.read.parquet(os.path.join(out, "data")).collect()
    return {
        "rows": [tuple(_plain(r[c]) for c in columns) for r in rows],
        "batches": [p.numInputRows for p in query.recentProgress if p.numInputRows],
    }


def _pausing(marker: str, pause_s: float) -> Any:
    def pause(batches: Iterator[Any]) -> Iterator[Any]:
        first = True
        for b in batches:
            if first:
                first = False
                try:
                    fd = os.open(marker + ".tmp", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    pass
                else:
                    os.write(fd, str(os.getpid()).encode())
                    os.close(fd)
                    os.rename(marker + ".tmp", marker)
                    time.sleep(pause_s)
            yield b

    return pause


# --- sinks ---------------------------------------------------------------------------------------
def batch_write(
    fmt: str, options: dict[str, str], rows: list[tuple[Any, ...]], ddl: str, partitions: int
) -> None:
    """``df.write`` of ``rows`` from ``partitions`` tasks."""
    df = _SPARK.createDataFrame(rows, ddl).repartition(partitions)
    df.write.format(fmt).options(**options).mode("append").save()


def stream_copy(
    source_fmt: str,
    source_options: dict[str, str],
    columns: list[str],
    sink_fmt: str,
    sink_options: dict[str, str],
    checkpoint: str,
    timeout_s: float = 240.0,
) -> int:
    """``readStream`` AvailableNow from one connector into another connector's sink; rows copied."""
    query = (
        _SPARK.readStream.format(source_fmt)
        .options(**source_options)
        .load()
        .selectExpr(*columns)
        .writeStream.format(sink_fmt)
        .options(**sink_options)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
    if not query.awaitTermination(timeout_s):
        query.stop()
        raise TimeoutError(f"the query did not finish within {timeout_s}s")
    if query.exception() is not None:
        raise RuntimeError(f"query failed: {query.exception()}")
    return sum(p.numInputRows for p in query.recentProgress)  # the property: Connect leaves the key None


def _plain(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return value


def write_files(directory: str, files: int, lines: int) -> list[str]:
    """``files`` jsonl files of ``lines`` lines each (written by the driver, read by executors)."""
    expected = []
    Path(directory).mkdir(parents=True, exist_ok=True)
    for f in range(files):
        body = []
        for i in range(lines):
            name = f"f{f:03d}-{i:06d}"
            body.append(f'{{"id": {1_000_000 + f * lines + i}, "name": "{name}"}}')  # equal file sizes
            expected.append(name)
        Path(directory, f"part-{f:03d}.jsonl").write_text("\n".join(body) + "\n")
    return expected


def create_pravega_stream(controller_uri: str, scope: str, stream: str, segments: int) -> None:
    """Create a scope and a stream with the project's controller client."""
    from connectors.pravega.controller_client import ConnectionSettings, ControllerClient

    controller = ControllerClient(ConnectionSettings(controller_uri))
    try:
        controller.create_scope(scope)
        if not controller.create_stream(scope, stream, segments):
            raise RuntimeError(f"stream {scope}/{stream} exists")
    finally:
        controller.close()
