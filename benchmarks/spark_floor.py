"""Spark's own share of a read: a Python data source that yields pre-built Arrow batches, no I/O.

A connector read through Spark costs the connector's work plus what Spark does with every row it is
handed (the Python worker's Arrow stream, the JVM's conversion of each row, the query itself) plus a
fixed cost per query (planning through Python workers, scheduling). The benchmarks run the same
query over this source with the connector's schema and row count, so their output separates the
two: what is left above this floor is the connector's. Each Python worker builds its batch once
and keeps it (workers are reused), so after a warm-up round the floor spends nothing on making
data; until 2026-11-29 every task built its batch again, which added about 0.1 s to a 6-task query
and flattered the ratios against it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

__all__ = ["floor_frame", "floor_read"]

BATCH_ROWS = 65_536
_BUILT: dict[tuple[Any, ...], pa.RecordBatch] = {}
"""The batch a reused Python worker built last (Spark reuses workers across tasks and queries)."""


def _column(field: pa.Field, rows: int, binary_size: int, null: bool) -> pa.Array:
    if null:
        return pa.nulls(rows, field.type)
    t = field.type
    if pa.types.is_binary(t):
        values = np.frombuffer(np.random.default_rng(1).bytes(rows * binary_size), dtype=np.uint8)
        offsets = np.arange(rows + 1, dtype=np.int32) * np.int32(binary_size)
        return pa.Array.from_buffers(t, rows, [None, pa.py_buffer(offsets), pa.py_buffer(values)])
    if pa.types.is_string(t):
        return pa.array(["benchmark-xyz"] * rows, t)
    if pa.types.is_timestamp(t):
        return pa.array(np.arange(rows, dtype=np.int64), t)
    if pa.types.is_list(t):  # Kafka's headers: one 3-byte header per row, as the Kafka benchmark's records
        item = t.value_type
        entries = pa.StructArray.from_arrays(
            [pa.array(["h"] * rows, item.field(0).type), pa.array([b"abc"] * rows, item.field(1).type)],
            fields=list(item),
        )
        return pa.ListArray.from_arrays(pa.array(np.arange(rows + 1, dtype=np.int32)), entries, type=t)
    return pa.array(np.arange(rows).astype(t.to_pandas_dtype()), t)


class _FloorReader(DataSourceReader):
    def __init__(self, schema: StructType, options: dict[str, str]) -> None:
        self.schema_json = schema.json()
        # Spark hands the options over with lower-case names
        self.rows = int(options["rows"])
        self.partitions_n = int(options.get("partitions", "2"))
        self.binary_size = int(options.get("binarysize", "100"))
        self.null_columns = set(filter(None, options.get("nullcolumns", "").split(",")))
        self.batch_file = options.get("batchfile")

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(i) for i in range(self.partitions_n)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from connector_base.spark import to_arrow_schema

        schema = to_arrow_schema(StructType.fromJson(json.loads(self.schema_json)))
        index = partition.value  # type: ignore[attr-defined]
        rows = self.rows // self.partitions_n + (1 if index < self.rows % self.partitions_n else 0)
        key = (self.schema_json, self.batch_file, self.binary_size, tuple(sorted(self.null_columns)))
        batch = _BUILT.get(key)
        if batch is None:  # built once per Python worker: the warm rounds time Spark's share only
            if self.batch_file:  # a connector's real output, repeated
                with pa.memory_map(self.batch_file) as source:
                    table = pa.ipc.open_file(source).read_all().cast(schema)
                batch = table.combine_chunks().to_batches()[0]
            else:
                batch = pa.RecordBatch.from_arrays(
                    [_column(f, BATCH_ROWS, self.binary_size, f.name in self.null_columns) for f in schema],
                    schema=schema,
                )
            _BUILT.clear()
            _BUILT[key] = batch
        size = batch.num_rows
        while rows > 0:
            yield batch if rows >= size else batch.slice(0, rows)
            rows -= size


class _FloorSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "benchmark-floor"

    def schema(self) -> StructType:
        return StructType.fromJson(json.loads(self.options["schema"]))

    def reader(self, schema: StructType) -> DataSourceReader:
        return _FloorReader(schema, dict(self.options))


def floor_frame(spark: Any, schema: StructType, rows: int, sample: pa.Table, partitions: int = 2) -> Any:
    """A DataFrame of ``rows`` rows of ``schema``: ``sample`` (a connector's real output) over and over.

    The floor for typed columns (nested records, maps, decimals) whose synthetic values would not
    cost Spark what real ones do. ``sample`` is written once to an Arrow file the executors read
    (removed when this process exits); build the frame once and query it every round.
    """
    import atexit
    import os
    import tempfile

    spark.dataSource.register(_FloorSource)
    fd, path = tempfile.mkstemp(prefix="spark-floor-", suffix=".arrow")
    os.close(fd)
    atexit.register(os.remove, path)
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, sample.schema) as writer:
        writer.write_table(sample)
    return (
        spark.read.format("benchmark-floor")
        .option("schema", schema.json())
        .option("rows", str(rows))
        .option("partitions", str(partitions))
        .option("batchFile", path)
        .load()
    )


def floor_read(
    spark: Any,
    schema: StructType,
    rows: int,
    measure: str,
    *,
    partitions: int = 2,
    binary_size: int = 100,
    null_columns: tuple[str, ...] = (),
) -> float:
    """Seconds for ``count(*), sum(length(<measure>))`` over ``rows`` rows of ``schema``.

    ``measure=""`` materialises every column instead (``write.format("noop")``), as the files
    benchmark's queries do.
    """
    spark.dataSource.register(_FloorSource)
    start = time.perf_counter()
    df = (
        spark.read.format("benchmark-floor")
        .option("schema", schema.json())
        .option("rows", str(rows))
        .option("partitions", str(partitions))
        .option("binarySize", str(binary_size))
        .option("nullColumns", ",".join(null_columns))
        .load()
    )
    if not measure:
        df.write.format("noop").mode("overwrite").save()
        return time.perf_counter() - start
    row = df.selectExpr("count(*) as n", f"sum(length({measure})) as b").collect()[0]
    elapsed = time.perf_counter() - start
    if row["n"] != rows:
        raise AssertionError(f"the floor source produced {row['n']} rows, expected {rows}")
    return elapsed
