"""Spark's ``format("kafka")`` as the oracle of ``kafka-unified``'s source, batch and streaming.

Each example draws a topic shape and options (``topics.py``, ``options.py``), runs the read through
both formats on the same real Kafka topic and compares rows, every micro-batch's records per
partition, and errors (``harness.py``). Differences the parity table calls on purpose are allowed
by their row (``allowed.py``); any other fails the test, with every example that differed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from integration_tests.connectors.differential_report import findings_message
from integration_tests.connectors.kafka.differential.allowed import explained_by
from integration_tests.connectors.kafka.differential.examples import (
    hypothesis_settings,
    record,
    timeout_s,
)
from integration_tests.connectors.kafka.differential.harness import (
    OURS,
    SPARK,
    Outcome,
    compare,
    run_batch,
    run_stream,
)
from integration_tests.connectors.kafka.differential.options import Case, source_options
from integration_tests.connectors.kafka.differential.topics import Topic, TopicShape, TopicStore, shapes
from sparkflow_testing.kafka.broker import KafkaBroker

pytestmark = [pytest.mark.spark, pytest.mark.integration]

BATCH_EXAMPLES = 6
STREAM_EXAMPLES = 4
TRIGGERS = ({"availableNow": True}, {"availableNow": True}, {"processingTime": "300 milliseconds"})


def _names_record(topic: Topic) -> Any:
    return lambda message: topic.name in message


def _check(
    findings: list[str],
    label: str,
    topic: Topic,
    case: Case,
    spark_out: Outcome,
    ours: Outcome,
    streaming: bool,
    extra: dict[str, Any] | None = None,
) -> None:
    diffs = compare(spark_out, ours, tuple(case.suspects), _names_record(topic))
    unexplained = [d for d in diffs if explained_by(case, d, spark_out, ours, streaming) is None]
    record(
        {
            "test": label,
            "shape": str(topic.shape),
            "options": case.options,
            "spark": spark_out.summary(),
            "ours": ours.summary(),
            "differences": [f"{d.kind}: {d.detail}" for d in diffs],
            "unexplained": len(unexplained),
            **(extra or {}),
        }
    )
    for d in unexplained:
        findings.append(
            f"{label} {d.kind}: {d.detail}\n  shape {topic.shape} ({topic.starts} .. {topic.ends})\n"
            f"  options {case.options}\n  Spark: {spark_out.summary()[:400]}\n  ours:  {ours.summary()[:400]}"
        )


def _run_examples(default: int, example: Callable[[Any, list[str]], None]) -> None:
    """``example(data, findings)`` for each seeded hypothesis example; then fail with every finding."""
    findings: list[str] = []
    ran = [0]
    began = time.monotonic()

    @hypothesis_settings(default)
    @given(data=st.data())
    def one(data: Any) -> None:
        example(data, findings)
        ran[0] += 1

    one()
    print(f"{ran[0]} examples in {time.monotonic() - began:.1f} s, {len(findings)} unexplained differences")
    assert not findings, findings_message("differences from Spark's Kafka source", findings, "\n\n")


@pytest.mark.timeout(timeout_s(BATCH_EXAMPLES, 20))
def test_batch_reads_match_spark(
    spark_with_kafka_jars: Any, real_kafka: KafkaBroker, topic_store: TopicStore
) -> None:
    def example(data: Any, findings: list[str]) -> None:
        topic = topic_store.get(data.draw(shapes(), label="shape"))
        case = data.draw(source_options(topic, streaming=False), label="options")
        options = {"kafka.bootstrap.servers": real_kafka.bootstrap, **case.options}
        spark_out = run_batch(spark_with_kafka_jars, SPARK, options)
        ours = run_batch(spark_with_kafka_jars, OURS, options)
        _check(findings, "batch", topic, case, spark_out, ours, streaming=False)

    _run_examples(BATCH_EXAMPLES, example)


@pytest.mark.timeout(timeout_s(STREAM_EXAMPLES, 60))
def test_streaming_reads_and_micro_batches_match_spark(
    spark_with_kafka_jars: Any, real_kafka: KafkaBroker, topic_store: TopicStore
) -> None:
    def example(data: Any, findings: list[str]) -> None:
        topic = topic_store.get(data.draw(shapes(), label="shape"))
        case = data.draw(source_options(topic, streaming=True), label="options")
        trigger = data.draw(st.sampled_from(TRIGGERS), label="trigger")
        options = {"kafka.bootstrap.servers": real_kafka.bootstrap, **case.options}
        spark_out = run_stream(spark_with_kafka_jars, SPARK, options, trigger)
        ours = run_stream(spark_with_kafka_jars, OURS, options, trigger)
        _check(findings, f"stream {trigger}", topic, case, spark_out, ours, streaming=True)

    _run_examples(STREAM_EXAMPLES, example)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("trigger", [{"availableNow": True}, {"processingTime": "300 milliseconds"}])
def test_max_offsets_per_trigger_does_not_starve_a_small_partition(
    spark_with_kafka_jars: Any, topic_store: TopicStore, trigger: dict[str, Any]
) -> None:
    """200 records on one partition, 2 on another, 7 on a fourth, at most 50 per trigger: Spark rounds
    the small shares (50 * 2/209 = 0.48 and 50 * 7/209 = 1.67) to one record, so the small partitions
    are read from the first batch on, not after the large one drained."""
    spark = spark_with_kafka_jars
    topic = topic_store.get(TopicShape(counts=(200, 2, 0, 7)))
    case = Case({"subscribe": topic.name, "startingOffsets": "earliest", "maxOffsetsPerTrigger": "50"})
    options = {"kafka.bootstrap.servers": topic_store.broker.bootstrap, **case.options}
    spark_out = run_stream(spark, SPARK, options, trigger)
    ours = run_stream(spark, OURS, options, trigger)
    assert spark_out.ok and ours.ok, (spark_out.summary(), ours.summary())
    first = ours.batches[0]
    assert first.get(f"{topic.name}/1") == 1 and first.get(f"{topic.name}/3") == 1, ours.batches
    assert ours.batches == spark_out.batches
    assert ours.rows == spark_out.rows and len(ours.rows) == 209
