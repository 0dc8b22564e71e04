from __future__ import annotations

import pyarrow as pa

from connector_base.spark import ArrowBatchOutput

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.binary())])


def test_rows_become_batches_of_the_target_size() -> None:
    out = ArrowBatchOutput(SCHEMA, batch_rows=1000)
    for i in range(2500):
        out.collect((i, b"x"))
    ready = list(out.drain())
    assert [b.num_rows for b in ready] == [1000, 1000]
    rest = list(out.finish())
    assert [b.num_rows for b in rest] == [500]
    assert rest[0].schema == SCHEMA
    assert out.rows_emitted == 2500


def test_small_batches_are_combined_and_rows_keep_order() -> None:
    out = ArrowBatchOutput(SCHEMA, batch_rows=100)
    out.collect((0, b"a"))
    out.collect_batch(
        pa.RecordBatch.from_pylist([{"id": i, "name": b"b"} for i in range(1, 60)], schema=SCHEMA)
    )
    out.collect_columns([list(range(60, 130)), [b"c"] * 70], 70)
    ids = [i for b in [*out.drain(), *out.finish()] for i in b.column(0).to_pylist()]
    assert ids == list(range(130))


def test_batches_are_cast_to_the_schema() -> None:
    out = ArrowBatchOutput(SCHEMA, batch_rows=10)
    out.collect_batch(
        pa.RecordBatch.from_arrays([pa.array([1, 2], pa.int32()), pa.array([b"a", b"b"])], ["id", "name"])
    )
    (b,) = list(out.finish())
    assert b.schema == SCHEMA
