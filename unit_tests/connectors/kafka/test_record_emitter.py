"""The emitter builds Spark's Kafka columns in bulk (client messages built locally, no network)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from confluent_kafka import Message

from connector_base.source_output import PlainSourceOutput
from connector_base.spark import ArrowBatchOutput
from connectors.kafka.record_emitter import KafkaRecordEmitter, arrow_schema
from connectors.kafka.split import KafkaPartitionSplit, KafkaPartitionSplitState
from connectors.kafka.split_reader import KafkaRecords


def message(offset: int, ts_type: int, headers: Any = None) -> Message:
    """A real client message (the emitter calls the client's methods unbound, for speed)."""
    return Message(
        topic="t",
        partition=3,
        offset=offset,
        key=None if offset % 2 else b"k%d" % offset,
        value=b"v%d" % offset,
        headers=headers,
        timestamp=(ts_type, 1_700_000_000_000 + offset),
    )


def test_columns_and_state() -> None:
    msgs = [message(5, 1, [("a", b"1"), ("b", None)]), message(6, 2), message(7, 0, [])]
    out = ArrowBatchOutput(arrow_schema(True), batch_rows=2)
    state = KafkaPartitionSplitState(KafkaPartitionSplit("t", 3, 5, 10))
    KafkaRecordEmitter(include_headers=True).emit_records(
        [KafkaRecords("t", 3, msgs)], PlainSourceOutput(out), state
    )
    (batch,) = list(out.finish())
    rows = batch.to_pylist()
    assert state.next_offset == 8
    assert [r["key"] for r in rows] == [None, b"k6", None]
    assert [r["value"] for r in rows] == [b"v5", b"v6", b"v7"]
    assert {r["topic"] for r in rows} == {"t"} and {r["partition"] for r in rows} == {3}
    assert [r["offset"] for r in rows] == [5, 6, 7]
    assert rows[0]["timestamp"] == dt.datetime.fromtimestamp(1_700_000_000.005, dt.UTC)
    assert [r["timestampType"] for r in rows] == [0, 1, -1]  # create, log-append, none (as the Java client)
    assert [r["headers"] for r in rows] == [
        [{"key": "a", "value": b"1"}, {"key": "b", "value": None}],
        None,
        None,
    ]
