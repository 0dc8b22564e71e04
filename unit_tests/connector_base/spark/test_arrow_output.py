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


def _batch(first: int, rows: int, size: int) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(
        [{"id": i, "name": b"v" * size} for i in range(first, first + rows)], schema=SCHEMA
    )


def test_small_batches_are_joined_only_up_to_the_byte_bound() -> None:
    # 10 batches of 10 rows of 1,000 bytes (~10 KB each): 100 rows would make one batch by count;
    # a 25,000-byte bound joins two at a time (a third would pass it), in order
    out = ArrowBatchOutput(SCHEMA, batch_rows=100, batch_bytes=25_000)
    for k in range(10):
        out.collect_batch(_batch(10 * k, 10, 1_000))
    batches = [*out.drain(), *out.finish()]
    assert [b.num_rows for b in batches] == [20] * 5
    assert all(b.nbytes <= 25_000 for b in batches)
    assert [i for b in batches for i in b.column(0).to_pylist()] == list(range(100))


def test_a_batch_over_the_byte_bound_passes_as_it_is_after_what_was_pending() -> None:
    out = ArrowBatchOutput(SCHEMA, batch_rows=100, batch_bytes=25_000)
    out.collect_batch(_batch(0, 5, 1_000))
    big = _batch(5, 30, 1_000)  # ~30 KB, over the bound by itself
    out.collect_batch(big)
    out.collect_batch(_batch(35, 5, 1_000))
    batches = [*out.drain(), *out.finish()]
    assert [b.num_rows for b in batches] == [5, 30, 5]
    assert batches[1] is big  # not copied
    assert [i for b in batches for i in b.column(0).to_pylist()] == list(range(40))
