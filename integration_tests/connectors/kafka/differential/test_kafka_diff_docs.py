"""docs/kafka.md's parity tables and the differential tests: the allow-list is the table of allowed
differences, and every row of the "Source options" table is a claim the harness checks against
Spark's own source or says why it cannot (``claims.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from integration_tests.connectors.differential_report import findings_message
from integration_tests.connectors.kafka.differential.allowed import ALLOWANCES, BEGIN, END, table
from integration_tests.connectors.kafka.differential.claims import CLAIMS, UNCHECKED, source_rows, summary
from integration_tests.connectors.kafka.differential.examples import record
from integration_tests.connectors.kafka.differential.harness import (
    OURS,
    SPARK,
    compare,
    run_batch,
    run_stream,
)
from integration_tests.connectors.kafka.differential.topics import TopicStore
from sparkflow_testing.kafka.broker import KafkaBroker

DOC = Path(__file__).resolve().parents[4] / "docs" / "kafka.md"


def test_the_doc_holds_the_allow_list_table_as_printed() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, (
        "regenerate: python -m integration_tests.connectors.kafka.differential.allowed"
    )
    held = text[text.index(BEGIN) : text.index(END) + len(END)]
    assert held == table(), (
        "docs/kafka.md's allowed differences differ from allowed.py; paste the output of "
        "python -m integration_tests.connectors.kafka.differential.allowed"
    )


def test_every_allowance_cites_one_row_that_says_different_on_purpose() -> None:
    text = DOC.read_text(encoding="utf-8")
    anchors = [a.anchor for a in ALLOWANCES]
    assert len(set(anchors)) == len(anchors)
    for anchor in anchors:
        rows = [ln for ln in text.splitlines() if f'<a id="{anchor}"></a>' in ln]
        assert len(rows) == 1 and "Different on purpose" in rows[0], anchor


def test_every_source_row_is_a_checked_claim_or_says_why_not() -> None:
    rows = source_rows()
    listed = [c.row for c in CLAIMS] + list(UNCHECKED)
    assert len(set(listed)) == len(listed)
    assert set(rows) == set(listed), (
        f"rows of docs/kafka.md's Source options table not in claims.py: {sorted(set(rows) - set(listed))}; "
        f"in claims.py but not in the table: {sorted(set(listed) - set(rows))}"
    )
    for claim in CLAIMS:
        if any(e.differs for e in claim.examples):
            assert "different" in rows[claim.row].lower(), f"{claim.row}: a read differs; the row must say so"
    text = DOC.read_text(encoding="utf-8")
    assert summary() in text, (
        "paste the output of python -m integration_tests.connectors.kafka.differential.claims"
    )


@pytest.mark.spark
@pytest.mark.integration
@pytest.mark.timeout(900)
def test_the_source_table_claims_hold_against_spark(
    spark_with_kafka_jars: Any, real_kafka: KafkaBroker, topic_store: TopicStore
) -> None:
    """Each pinned read of a claimed row: no difference where the row says same, one where it differs."""
    contradicted: list[str] = []
    for claim in CLAIMS:
        for example in claim.examples:
            topic = topic_store.get(example.shape)
            options = dict(example.options(topic))
            if example.bootstrap:
                options["kafka.bootstrap.servers"] = real_kafka.bootstrap
            if example.streaming:
                spark_out = run_stream(spark_with_kafka_jars, SPARK, options, example.trigger)
                ours = run_stream(spark_with_kafka_jars, OURS, options, example.trigger)
            else:
                spark_out = run_batch(spark_with_kafka_jars, SPARK, options)
                ours = run_batch(spark_with_kafka_jars, OURS, options)
            suspects = (*options, "kafka.bootstrap.servers")
            diffs = compare(spark_out, ours, suspects, lambda m, t=topic.name: t in m)
            record(
                {
                    "test": "claims",
                    "row": claim.row,
                    "options": options,
                    "differences": [str(d) for d in diffs],
                }
            )
            if bool(diffs) != example.differs:
                contradicted.append(
                    f"{claim.row}: {'expected a difference, found none' if example.differs else diffs}\n"
                    f"  options {options}\n  Spark: {spark_out.summary()[:300]}\n"
                    f"  ours:  {ours.summary()[:300]}"
                )
    assert not contradicted, findings_message(
        "docs/kafka.md's Source options table contradicted", contradicted, "\n\n"
    )
