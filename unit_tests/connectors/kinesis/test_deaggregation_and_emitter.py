from __future__ import annotations

import pyarrow as pa

from connectors.kinesis.deaggregation import KPL_MAGIC, aggregate, deaggregate
from connectors.kinesis.positions import ShardPosition
from connectors.kinesis.record_emitter import KinesisRecordEmitter, arrow_schema
from connectors.kinesis.split import KinesisShardSplit, KinesisShardSplitState
from connectors.kinesis.split_reader import KinesisShardSplitReader, _Cursor


def test_aggregate_round_trip() -> None:
    users = [(b"a", "k1"), (b"", "k2"), (b"c" * 300, "k1")]
    packed = aggregate(users)
    assert packed.startswith(KPL_MAGIC)
    assert deaggregate(packed, "outer") == users


def test_plain_and_corrupt_records_are_not_aggregated() -> None:
    assert deaggregate(b"plain data", "k") is None
    packed = bytearray(aggregate([(b"a", "k")]))
    packed[6] ^= 0xFF  # checksum no longer matches
    assert deaggregate(bytes(packed), "k") is None


class _Output:
    def __init__(self) -> None:
        self.batches: list[pa.RecordBatch] = []
        self.timestamps: list[list[int] | None] = []

    def collect(self, record: object, timestamp: int = 0) -> None:
        raise AssertionError("the emitter emits batches")

    def collect_batch(self, batch: pa.RecordBatch, timestamps: list[int] | None = None) -> None:
        self.batches.append(batch)
        self.timestamps.append(None if timestamps is None else list(timestamps))


def _page() -> list[dict[str, object]]:
    return [
        {
            "Data": b"x",
            "PartitionKey": "p",
            "SequenceNumber": "1",
            "ApproximateArrivalTimestamp": 1700000000.123,
        },
        {
            "Data": aggregate([(b"u1", "a"), (b"u2", "b")]),
            "PartitionKey": "outer",
            "SequenceNumber": "2",
            "ApproximateArrivalTimestamp": 1700000000.124,
        },
    ]


def test_emitter_builds_arrow_and_advances_state() -> None:
    split = KinesisShardSplit("s", "shard-1", ShardPosition.trim_horizon())
    state = KinesisShardSplitState(split)
    out = _Output()
    KinesisRecordEmitter("s", deaggregate_records=False).emit_records([_page()], out, state)
    batch = out.batches[0]
    assert batch.schema == arrow_schema(False)
    assert batch.num_rows == 2
    assert batch.column(0).to_pylist()[0] == b"x"
    assert batch.column(2).to_pylist() == ["shard-1", "shard-1"]
    assert batch.column(5).cast(pa.int64()).to_pylist() == [1700000000123000, 1700000000124000]
    assert out.timestamps == [[1700000000123, 1700000000124]]  # arrival times: the event time
    assert state.position == ShardPosition.after_sequence_number("2")


def test_emitter_deaggregates_with_sub_sequence_numbers() -> None:
    split = KinesisShardSplit("s", "shard-1", ShardPosition.trim_horizon())
    out = _Output()
    KinesisRecordEmitter("s", deaggregate_records=True).emit_records(
        [_page()], out, KinesisShardSplitState(split)
    )
    rows = out.batches[0].to_pylist()
    assert [(r["data"], r["partitionKey"], r["sequenceNumber"], r["subSequenceNumber"]) for r in rows] == [
        (b"x", "p", "1", 0),
        (b"u1", "a", "2", 0),
        (b"u2", "b", "2", 1),
    ]


def _rec(seq: int, ms: int) -> dict[str, object]:
    return {
        "SequenceNumber": str(seq),
        "ApproximateArrivalTimestamp": ms / 1000,
        "Data": b"",
        "PartitionKey": "k",
    }


def test_select_cuts_at_the_first_record_at_or_after_the_end_in_sequence_order() -> None:
    split = KinesisShardSplit("s", "sh", ShardPosition.at_timestamp(100), ShardPosition.at_timestamp(200))
    cursor = _Cursor(split)
    page = [_rec(1, 99), _rec(2, 100), _rec(3, 150), _rec(4, 200), _rec(5, 150)]
    selected, done = KinesisShardSplitReader._select(cursor, page)
    assert [r["SequenceNumber"] for r in selected] == ["2", "3"] and done


def test_select_skips_across_pages_until_the_start() -> None:
    split = KinesisShardSplit("s", "sh", ShardPosition.at_timestamp(100), None)
    cursor = _Cursor(split)
    assert KinesisShardSplitReader._select(cursor, [_rec(1, 50), _rec(2, 99)]) == ([], False)
    selected, done = KinesisShardSplitReader._select(cursor, [_rec(3, 100), _rec(4, 99)])
    assert [r["SequenceNumber"] for r in selected] == ["3", "4"] and not done
