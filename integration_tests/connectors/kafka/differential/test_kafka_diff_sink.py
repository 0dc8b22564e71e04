"""Spark's ``format("kafka")`` sink as the oracle of ``kafka-unified``'s sink, batch and streaming.

Each example draws a DataFrame (``value`` as string or binary or missing or mistyped, ``key``
absent / string / binary / with nulls, a ``topic`` column and/or the ``topic`` option, ``headers``,
a ``partition`` column in or out of range, an extra column), writes it with both sinks to two new
topics of the same partition count, reads both back with a plain consumer and compares: the records
(key, value, headers) per partition where the partition is determined (a key or a ``partition``
column; a null key goes where each producer's partitioner picks), else over the whole topic; or
both fail, ours naming the column or option.

Streaming (``writeStream``): the same select list over one input stream (Parquet files of ``id``
read by Spark's file source, one file per micro-batch), written by both sinks with
``Trigger.AvailableNow`` and a checkpoint each; then a file is added and both queries are run again
from their checkpoints. Both must write the same records once each (nothing again after the
restart, nothing lost), or both fail, ours no later (``start()`` before a micro-batch) and naming
the column or option.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from collections import Counter
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from integration_tests.connectors.kafka.differential.examples import hypothesis_settings, record, timeout_s
from integration_tests.connectors.kafka.differential.harness import OURS, SPARK, error_text
from sparkflow_testing.kafka.broker import KafkaBroker

pytestmark = [pytest.mark.spark, pytest.mark.integration]

SINK_EXAMPLES = 3
STREAM_SINK_EXAMPLES = 2
PARTITIONS = 3
STREAM_TIMEOUT_S = 180.0


_VALUES = {
    "string": ["concat('v', id) as value"],
    "binary": ["cast(concat('v', id) as binary) as value"],
    "int": ["cast(id as int) as value"],
    "missing": [],
}
_KEYS = {
    "none": [],
    "string": ["concat('k', id) as key"],
    "binary": ["cast(concat('k', id) as binary) as key"],
    "some-null": ["if(id % 3 = 0, null, concat('k', id)) as key"],
}


@st.composite
def _frame(draw: Any) -> tuple[str, list[str], list[str]]:
    """``(select list over range(n), option keys to set, suspects)``; ``{topic}`` is filled in later."""
    cols: list[str] = []
    suspects: list[str] = []
    value = draw(st.sampled_from(["string", "string", "binary", "missing", "int"]))
    cols.extend(_VALUES[value])
    if value in ("missing", "int"):
        suspects.append("value")
    cols.extend(_KEYS[draw(st.sampled_from(sorted(_KEYS)))])
    if draw(st.booleans()):
        cols.append(
            "if(id % 4 = 0, null, array("
            "named_struct('key', 'h', 'value', cast(cast(id as string) as binary)),"
            " named_struct('key', 'h', 'value', cast(null as binary)))) as headers"
        )
    partition = draw(st.sampled_from(["none", "none", "valid", "out-of-range"]))
    if partition == "valid":
        cols.append(f"cast(id % {PARTITIONS} as int) as partition")
    elif partition == "out-of-range":
        cols.append(f"cast(id % {PARTITIONS} + {PARTITIONS} as int) as partition")
        suspects.append("partition")
    if draw(st.booleans()):
        cols.append("id as extra")
    topic = draw(st.sampled_from(["option", "option", "column", "both", "neither", "null-column"]))
    options: list[str] = []
    if topic in ("column", "both"):
        cols.append("'{topic}' as topic")
    if topic == "null-column":
        cols.append("if(id = 2, null, '{topic}') as topic")
        suspects.append("topic")
    if topic in ("option", "both"):
        options.append("topic")
    if topic == "neither":
        suspects.append("topic")
    return ", ".join(cols) or "id", options, suspects


def _read_all(broker: KafkaBroker, topic: str, quiet_s: float = 0.5) -> list[tuple[Any, ...]]:
    from confluent_kafka import TopicPartition

    c = broker.consumer()
    try:
        md = c.list_topics(topic, timeout=10)
        c.assign([TopicPartition(topic, p, 0) for p in md.topics[topic].partitions])
        out: list[tuple[Any, ...]] = []
        last = time.monotonic()
        while time.monotonic() - last < quiet_s:
            for m in c.consume(500, 0.2):
                if m.error() is None:
                    out.append((m.partition(), m.key(), m.value(), tuple(m.headers() or ())))
                    last = time.monotonic()
        return out
    finally:
        c.close()


def _write(
    spark: Any, broker: KafkaBroker, fmt: str, select: str, options: list[str], topic: str, n: int
) -> str | None:
    df = spark.sql(f"select {select.replace('{topic}', topic)} from range({n})")
    writer = df.write.format(fmt).mode("append").option("kafka.bootstrap.servers", broker.bootstrap)
    for o in options:
        writer = writer.option(o, topic)
    try:
        writer.save()
    except Exception as e:  # the error is the observation
        return error_text(e)
    return None


def _comparable(records: list[tuple[Any, ...]], partition_column: bool) -> Counter[tuple[Any, ...]]:
    """Records with their partition where it is determined: a ``partition`` column, else a key."""
    return Counter(
        (p if partition_column or k is not None else None, k, v, tuple(h)) for p, k, v, h in records
    )


@pytest.mark.timeout(timeout_s(SINK_EXAMPLES, 40))
def test_batch_writes_match_spark(spark_with_kafka_jars: Any, real_kafka: KafkaBroker) -> None:
    spark = spark_with_kafka_jars
    findings: list[str] = []
    began = time.monotonic()

    @hypothesis_settings(SINK_EXAMPLES)
    @given(frame=_frame(), n=st.sampled_from([1, 7, 40]))
    def one(frame: tuple[str, list[str], list[str]], n: int) -> None:
        select, options, suspects = frame
        theirs, ours = real_kafka.create_topic(PARTITIONS), real_kafka.create_topic(PARTITIONS)
        spark_error = _write(spark, real_kafka, SPARK, select, options, theirs, n)
        our_error = _write(spark, real_kafka, OURS, select, options, ours, n)
        spark_rows = _read_all(real_kafka, theirs) if spark_error is None else []
        our_rows = _read_all(real_kafka, ours) if our_error is None else []
        diffs: list[str] = []
        if (spark_error is None) != (our_error is None):
            diffs.append(f"only one failed: Spark {spark_error}; ours {our_error}")
        elif spark_error is None:
            by = "as partition" in select
            if _comparable(spark_rows, by) != _comparable(our_rows, by):
                diffs.append(
                    f"records differ: Spark {sorted(map(str, spark_rows))[:5]} "
                    f"ours {sorted(map(str, our_rows))[:5]}"
                )
        elif our_error is not None and not any(s in our_error for s in suspects):
            diffs.append(f"ours names none of {suspects}: {our_error[:300]}")
        record(
            {
                "test": "sink",
                "select": select,
                "options": options,
                "n": n,
                "spark": spark_error,
                "ours": our_error,
                "records": len(our_rows),
                "differences": diffs,
            }
        )
        findings.extend(f"{d}\n  select {select}\n  options {options}" for d in diffs)

    one()
    print(f"sink: {time.monotonic() - began:.1f} s, {len(findings)} differences")
    assert not findings, "\n\n".join(findings)


def _input_file(directory: str, index: int, ids: range) -> None:
    """One Parquet file of ``id bigint`` (renamed into place, as a file source expects)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tmp = os.path.join(directory, f".part-{index:03d}.parquet.tmp")
    pq.write_table(pa.table({"id": pa.array(list(ids), pa.int64())}), tmp)
    os.rename(tmp, os.path.join(directory, f"part-{index:03d}.parquet"))


def _write_stream(
    spark: Any,
    broker: KafkaBroker,
    fmt: str,
    select: str,
    options: list[str],
    topic: str,
    src: str,
    checkpoint: str,
) -> tuple[str | None, str]:
    """One ``Trigger.AvailableNow`` run of ``select`` over the files of ``src``: ``(stage, error)``.

    ``stage`` is None when the run ended without error, else ``"start"`` or ``"run"``.
    """
    view = f"diff_sink_{uuid.uuid4().hex[:10]}"
    stream = spark.readStream.schema("id bigint").option("maxFilesPerTrigger", "1").parquet(src)
    stream.createOrReplaceTempView(view)
    try:
        df = spark.sql(f"select {select.replace('{topic}', topic)} from {view}")
        writer = (
            df.writeStream.format(fmt)
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("checkpointLocation", checkpoint)
            .trigger(availableNow=True)
        )
        for o in options:
            writer = writer.option(o, topic)
        try:
            query = writer.start()
        except Exception as e:  # the error is the observation
            return "start", error_text(e)
        try:
            query.awaitTermination(STREAM_TIMEOUT_S)
            error = query.exception()
            if error is None and query.isActive:
                return "run", f"did not end within {STREAM_TIMEOUT_S:.0f} s"
            return (None, "") if error is None else ("run", error_text(error))
        except Exception as e:
            return "run", error_text(e)
        finally:
            try:
                query.stop()
            except Exception:  # a failed query may refuse to stop; it is stopped either way
                pass
    finally:
        spark.catalog.dropTempView(view)


_STAGES = ("start", "run")


@pytest.mark.timeout(timeout_s(STREAM_SINK_EXAMPLES, 120))
def test_stream_writes_match_spark(spark_with_kafka_jars: Any, real_kafka: KafkaBroker) -> None:
    spark = spark_with_kafka_jars
    findings: list[str] = []
    began = time.monotonic()

    @hypothesis_settings(STREAM_SINK_EXAMPLES)
    @given(frame=_frame(), n=st.sampled_from([7, 40]))
    def one(frame: tuple[str, list[str], list[str]], n: int) -> None:
        select, options, suspects = frame
        work = tempfile.mkdtemp(prefix="diff-kafka-sink-")
        try:
            src = os.path.join(work, "in")
            os.mkdir(src)
            half = n // 2
            _input_file(src, 0, range(0, half))
            _input_file(src, 1, range(half, n))
            topics = {SPARK: real_kafka.create_topic(PARTITIONS), OURS: real_kafka.create_topic(PARTITIONS)}
            runs: dict[str, list[tuple[str | None, str]]] = {SPARK: [], OURS: []}
            for fmt in (SPARK, OURS):
                checkpoint = os.path.join(work, f"cp-{fmt}")
                runs[fmt].append(
                    _write_stream(spark, real_kafka, fmt, select, options, topics[fmt], src, checkpoint)
                )
            if runs[SPARK][0][0] is None and runs[OURS][0][0] is None:
                _input_file(src, 2, range(n, n + 5))  # the restart reads only this file
                for fmt in (SPARK, OURS):
                    checkpoint = os.path.join(work, f"cp-{fmt}")
                    runs[fmt].append(
                        _write_stream(spark, real_kafka, fmt, select, options, topics[fmt], src, checkpoint)
                    )
            spark_stage, spark_error = next(((s, e) for s, e in runs[SPARK] if s), (None, ""))
            our_stage, our_error = next(((s, e) for s, e in runs[OURS] if s), (None, ""))
            diffs: list[str] = []
            records = 0
            if (spark_stage is None) != (our_stage is None):
                diffs.append(
                    f"only one failed: Spark {spark_stage} {spark_error}; ours {our_stage} {our_error}"
                )
            elif spark_stage is None:
                by = "as partition" in select
                spark_rows = _read_all(real_kafka, topics[SPARK])
                our_rows = _read_all(real_kafka, topics[OURS])
                records = len(our_rows)
                if _comparable(spark_rows, by) != _comparable(our_rows, by):
                    diffs.append(
                        f"records differ ({len(spark_rows)} vs {len(our_rows)}): "
                        f"Spark {sorted(map(str, spark_rows))[:5]} ours {sorted(map(str, our_rows))[:5]}"
                    )
                if len(spark_rows) != n + 5:
                    diffs.append(f"Spark wrote {len(spark_rows)} records of {n + 5} (the oracle itself)")
            else:
                assert our_stage is not None and spark_stage is not None
                if _STAGES.index(our_stage) > _STAGES.index(spark_stage):
                    diffs.append(f"ours failed at {our_stage}, Spark at {spark_stage}: {our_error[:300]}")
                if not any(s in our_error for s in suspects):
                    diffs.append(f"ours names none of {suspects}: {our_error[:300]}")
            record(
                {
                    "test": "stream-sink",
                    "select": select,
                    "options": options,
                    "n": n,
                    "spark": [spark_stage, spark_error],
                    "ours": [our_stage, our_error],
                    "records": records,
                    "differences": diffs,
                }
            )
            findings.extend(f"{d}\n  select {select}\n  options {options}" for d in diffs)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    one()
    print(f"stream sink: {time.monotonic() - began:.1f} s, {len(findings)} differences")
    assert not findings, "\n\n".join(findings)
