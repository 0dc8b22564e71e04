"""Helpers shared by the Kafka integration tests."""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

import pytest

from integration_tests.connectors.query_failure import failure_message
from sparkflow_testing.kafka.broker import Gap, KafkaBroker

FORMAT = "kafka-unified"


def reader(spark: Any, broker: KafkaBroker, **options: str) -> Any:
    """A batch DataFrameReader for ``broker``."""
    return spark.read.format(FORMAT).option("kafka.bootstrap.servers", broker.bootstrap).options(**options)


def read_back(
    spark: Any, broker: KafkaBroker, topic: str, written: int | None = None, **options: str
) -> list[Any]:
    """The rows a batch read of ``topic`` returns, for checking what was just written to it.

    A batch read stops at the high watermarks of ``load()``. On a stand-in whose high watermark can
    stay below what concurrent producers wrote (tansu under load), a read that came back short is
    skipped with the reason and the figures: the read would be right, the expectation would not.
    Short means fewer rows than the caller says it ``written``, or a read that ended below the log's
    last record. The count is the check that holds: the log is read through a consumer, which the
    same stuck watermark stops short too (a read one record short of 30 written once passed the log
    check and failed the test). The log is looked at after the read (the watermark can fall behind
    between a check before it and the read).
    """
    rows = list(reader(spark, broker, subscribe=topic, **options).load().collect())
    reason = broker.gap_reason(Gap.HIGH_WATERMARK_BATCHED)
    if reason:
        if written is not None and len(rows) < written:
            pytest.skip(f"{reason} (this run: read {len(rows)} of the {written} records written)")
        read_to: dict[int, int] = {}
        for r in rows:
            read_to[r["partition"]] = max(read_to.get(r["partition"], -1), r["offset"])
        held = broker.log_contents(topic, quiet_s=1.0)
        short = {
            p: (read_to.get(p, -1) + 1, recs[-1][0] + 1)
            for p, recs in held.items()
            if recs and read_to.get(p, -1) < recs[-1][0]
        }
        if short:
            pytest.skip(f"{reason} (this run, partition: (read up to, log end)): {short}")
    return rows


def stream(spark: Any, broker: KafkaBroker, **options: str) -> Any:
    """A streaming DataFrameReader for ``broker``."""
    return (
        spark.readStream.format(FORMAT).option("kafka.bootstrap.servers", broker.bootstrap).options(**options)
    )


def consume_all(broker: KafkaBroker, topic: str, field: str = "value") -> list[bytes | None]:
    """Every record's ``value`` (or ``key``) of ``topic`` read with a plain consumer, until 3 s pass
    without one (for checking what a sink wrote with the writing library's own deserializers)."""
    consumer = broker.consumer()
    consumer.subscribe([topic])
    out: list[bytes | None] = []
    idle = 0
    try:
        while idle < 3:
            msgs = consumer.consume(1000, timeout=1.0)
            idle = 0 if msgs else idle + 1
            out.extend((m.value() if field == "value" else m.key()) for m in msgs if m.error() is None)
    finally:
        consumer.close()
    return out


def values_of(rows: Any) -> list[bytes]:
    """The ``value`` column as bytes."""
    return [bytes(r["value"]) for r in rows]


def memory_query(df: Any, tmp_path: Any, trigger: dict[str, Any] | None = None) -> tuple[Any, str]:
    """Start ``df`` into a memory table; returns ``(query, table name)``."""
    name = f"q_{uuid.uuid4().hex[:10]}"
    writer = (
        df.writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", os.path.join(str(tmp_path), name))
    )
    writer = writer.trigger(**(trigger or {"processingTime": "200 milliseconds"}))
    return writer.start(), name


def wait_rows(spark: Any, table: str, count: int, query: Any, timeout_s: float = 90.0) -> list[Any]:
    """Wait until ``table`` holds at least ``count`` rows (or the query fails)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        failed = failure_message(query)
        if failed is not None:
            raise AssertionError(failed)
        rows = spark.sql(f"select * from {table}").collect()
        if len(rows) >= count:
            return rows
        time.sleep(0.3)
    raise AssertionError(f"{table}: fewer than {count} rows after {timeout_s}s")


def batch_sizes(query: Any) -> list[int]:
    """``numInputRows`` of each micro-batch that read something."""
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]


def produce_transactions(
    broker: KafkaBroker, topic: str, one_producer: bool = True
) -> tuple[list[bytes], list[bytes]]:
    """Committed (5), aborted (3), committed (2) transactions on partition 0.

    Returns ``(committed values, every value)``; the log also holds three transaction markers
    (offsets 5, 9 and 12). ``one_producer=False`` uses a producer per transaction.
    """
    committed: list[bytes] = []
    every: list[bytes] = []
    p = None
    for tag, n, commit in (("c", 5, True), ("a", 3, False), ("d", 2, True)):
        if p is None or not one_producer:
            p = broker.producer(**{"transactional.id": f"tx-{topic}-{tag if not one_producer else ''}"})
            p.init_transactions(30)
        p.begin_transaction()
        values = [f"{tag}{i}".encode() for i in range(n)]
        for v in values:
            p.produce(topic, value=v, partition=0)
        p.flush(30)  # so aborted records reach the log (librdkafka purges unsent ones on abort)
        if commit:
            p.commit_transaction(30)
            committed += values
        else:
            p.abort_transaction(30)
        every += values
    return committed, every


def split_reader_class(options: Any) -> Any:
    """The split reader class of the options' ``kafka.reader`` (for tests that drive one directly)."""
    from connectors.kafka.reader_choice import KafkaReader

    if options.reader is KafkaReader.NATIVE:
        from connectors.kafka.native_split_reader import KafkaNativePartitionSplitReader

        return KafkaNativePartitionSplitReader
    from connectors.kafka.split_reader import KafkaPartitionSplitReader

    return KafkaPartitionSplitReader


def record_values(records: Any) -> list[bytes | None]:
    """The values of one fetch's records of a split, from either reader's record type."""
    if hasattr(records, "batch"):  # the compiled reader's Arrow batch
        return list(records.batch.column("value").to_pylist())
    return [m.value() for m in records.messages]
