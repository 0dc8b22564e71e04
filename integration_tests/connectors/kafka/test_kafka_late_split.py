"""A split that shows up mid-run under the event-time cut, on Spark with real Kafka.

A running query with ``eventTime.alignment=cut`` has read two partitions to their end; then the
topic gets new partitions (``create_partitions``), or a new topic matches ``subscribePattern``.
A new partition whose records are older than the current cut is reported (a warning, and
``reportLatestOffset``'s ``eventTime.lateSplits``): its rows reach Spark, whose watermark drops them
as late. With ``eventTime.failOnLateSplit=true`` the query fails instead, naming the split and the
option. A new partition whose records are newer than the cut is read and not reported.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from integration_tests.connectors.kafka.conftest import require
from integration_tests.connectors.kafka.helpers import stream
from integration_tests.connectors.query_failure import failure_message
from sparkflow_testing.kafka.broker import Gap, KafkaBroker

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(240)]

RECORDS = 60
"""In each of the first two partitions, a second apart."""
NEW_RECORDS = 30
"""In each partition added mid-run."""
HOUR_MS = 3_600_000
WATERMARK = "1 minute"
CUT_OPTIONS = {
    "startingOffsets": "earliest",
    "maxOffsetsPerTrigger": "50",
    "partitionDiscoveryIntervalMs": "200",
    "eventTime.alignment": "cut",
    "eventTime.idleTimeout": "1s",
}
WAIT_S = 90.0


def _needs(broker: KafkaBroker) -> None:
    require(broker, Gap.CREATE_PARTITIONS, Gap.OFFSETS_FOR_TIMES, Gap.OFFSETS_FOR_TIMES_EXPIRES)


def _two_partitions(broker: KafkaBroker, base_ms: int, name: str | None = None) -> str:
    topic = broker.create_topic(2, name=name)
    for partition in (0, 1):
        broker.produce(
            topic,
            [f"p{partition}-{i}".encode() for i in range(RECORDS)],
            partition=partition,
            timestamps=[base_ms + i * 1000 for i in range(RECORDS)],
        )
    return topic


def _produce_at(broker: KafkaBroker, topic: str, partition: int, first_ms: int) -> None:
    broker.produce(
        topic,
        [f"n{partition}-{i}".encode() for i in range(NEW_RECORDS)],
        partition=partition,
        timestamps=[first_ms + i * 1000 for i in range(NEW_RECORDS)],
    )


def _add_partitions(broker: KafkaBroker, topic: str, total: int) -> None:
    from confluent_kafka.admin import NewPartitions

    admin = broker.admin()  # keep a reference: the futures fail if the client is destroyed
    for f in admin.create_partitions([NewPartitions(topic, total)]).values():
        f.result(30)
    broker.wait_for_partitions(topic, total)


def _start(df: Any, checkpoint: str) -> tuple[Any, str]:
    """The watermarked query (dedup within the watermark, then a windowed count per partition)."""
    from pyspark.sql import functions as F

    name = f"late_{uuid.uuid4().hex[:10]}"
    counts = (
        df.withWatermark("timestamp", WATERMARK)
        .dropDuplicatesWithinWatermark(["partition", "offset"])
        .groupBy(F.window("timestamp", "1 minute"), "partition")
        .count()
    )
    query = (
        counts.writeStream.format("memory")
        .queryName(name)
        .outputMode("update")
        .option("checkpointLocation", f"{checkpoint}/{name}")
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    return query, name


def _input_rows(query: Any) -> int:
    return sum(p["numInputRows"] for p in query.recentProgress)


def _dropped(query: Any) -> int:
    return sum(
        op.get("numRowsDroppedByWatermark", 0) for p in query.recentProgress for op in p["stateOperators"]
    )


def _reports(query: Any) -> list[dict[str, Any]]:
    """Every ``reportLatestOffset`` of the query's recent progress, parsed."""
    return [json.loads(p["sources"][0]["latestOffset"]) for p in query.recentProgress if p["sources"]]


def _planned(query: Any, split_id: str) -> bool:
    """Whether a logged micro-batch's end offset holds ``split_id`` (it was discovered)."""
    last = query.lastProgress
    return last is not None and split_id in json.loads(last["sources"][0]["endOffset"])["splits"]


def _wait(query: Any, what: str, done: Callable[[], bool], timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        failed = failure_message(query, f" while waiting for {what}")
        if failed is not None:
            raise AssertionError(failed)
        if done():
            return
        time.sleep(0.2)
    raise AssertionError(f"no {what} within {timeout_s} s")


@dataclass(frozen=True)
class Outcome:
    """What the query with two partitions added mid-run saw."""

    topic: str
    cut_before: int
    """The cut once the first two partitions were read to their end."""
    reports: list[dict[str, Any]]
    input_rows: int
    dropped: int
    counted: dict[int, int]
    """Rows the windowed count holds, per Kafka partition."""


@pytest.fixture(scope="module")
def added_mid_run(spark: Any, reference_broker: KafkaBroker, tmp_path_factory: Any) -> Outcome:
    """Partition 2 gets records an hour older than the cut, partition 3 records newer than it.

    Both are created (and discovered, empty) before any record is written to them: the order in
    which a producer fills a new partition of a running query's topic.
    """
    _needs(reference_broker)
    base = int(time.time() * 1000) - 10 * 60_000
    topic = _two_partitions(reference_broker, base)
    df = stream(spark, reference_broker, subscribe=topic, **CUT_OPTIONS).load()
    query, table = _start(df, str(tmp_path_factory.mktemp("late-split")))
    try:
        _wait(query, f"{2 * RECORDS} rows", lambda: _input_rows(query) >= 2 * RECORDS)
        cut = _reports(query)[-1]["eventTime"]["cut"]
        assert cut == base + (RECORDS - 1) * 1000 + 1, cut  # the newest record + 1 ms (maxDrift 0)
        _add_partitions(reference_broker, topic, 4)
        _wait(query, "discovery", lambda: _planned(query, f"{topic}-2") and _planned(query, f"{topic}-3"))
        _produce_at(reference_broker, topic, 2, base - HOUR_MS)
        _produce_at(reference_broker, topic, 3, cut + 60_000)
        total = 2 * RECORDS + 2 * NEW_RECORDS
        _wait(query, f"{total} rows", lambda: _input_rows(query) >= total)
        query.processAllAvailable()
        counted: dict[int, int] = {}
        for r in spark.sql(
            f"select partition, max(count) as n from {table} group by window, partition"
        ).collect():
            counted[r["partition"]] = counted.get(r["partition"], 0) + r["n"]
        return Outcome(topic, cut, _reports(query), _input_rows(query), _dropped(query), counted)
    finally:
        query.stop()


def test_a_new_partition_older_than_the_cut_is_reported_and_spark_drops_its_rows(
    added_mid_run: Outcome,
) -> None:
    out = added_mid_run
    late = {sid for r in out.reports for sid in r["eventTime"]["lateSplits"]}
    assert late == {f"{out.topic}-2"}, late
    report = out.reports[-1]["eventTime"]["lateSplits"][f"{out.topic}-2"]
    # every record of partition 2 is older than the cut the query had reached; the oldest by 1 h + 59 s
    assert report == {
        "records": NEW_RECORDS,
        "behindMs": HOUR_MS + (RECORDS - 1) * 1000 + 1,
        "cut": out.cut_before,
    }
    # what Spark does with them: the source delivers them, and the first stateful operator
    # (dropDuplicatesWithinWatermark) drops every one as older than the watermark (the newest
    # event time seen minus 1 minute), so the windowed count holds none of them
    assert out.input_rows == 2 * RECORDS + 2 * NEW_RECORDS
    assert out.dropped == NEW_RECORDS
    assert 2 not in out.counted, out.counted
    assert out.counted[0] == out.counted[1] == RECORDS


def test_a_new_partition_newer_than_the_cut_is_read_and_not_reported(added_mid_run: Outcome) -> None:
    out = added_mid_run
    assert f"{out.topic}-3" not in {sid for r in out.reports for sid in r["eventTime"]["lateSplits"]}
    assert out.counted.get(3) == NEW_RECORDS  # none dropped as late
    assert out.reports[-1]["eventTime"]["cut"] > out.cut_before + 60_000  # the cut moved on over it


def test_fail_on_late_split_fails_the_query_naming_the_split_and_the_option(
    spark: Any, reference_broker: KafkaBroker, tmp_path: Any
) -> None:
    """A new topic matching ``subscribePattern``, discovered while empty, then given old records.

    The default idle timeout (60 s) keeps the empty split from ever being idle: it is caught
    because it has read nothing and has no event time yet (before, it went unreported and was read).
    """
    from pyspark.errors import StreamingQueryException

    _needs(reference_broker)
    prefix = f"late-{uuid.uuid4().hex[:8]}"
    base = int(time.time() * 1000) - 10 * 60_000
    _two_partitions(reference_broker, base, name=f"{prefix}-a")
    options = {k: v for k, v in CUT_OPTIONS.items() if k != "eventTime.idleTimeout"}
    df = stream(
        spark,
        reference_broker,
        subscribePattern=f"{prefix}-.*",
        **options,
        **{"eventTime.failOnLateSplit": "true"},
    ).load()
    query, _table = _start(df, str(tmp_path))
    late_split = f"{prefix}-b-0"
    try:
        _wait(query, f"{2 * RECORDS} rows", lambda: _input_rows(query) >= 2 * RECORDS)
        reference_broker.create_topic(1, name=f"{prefix}-b")  # matches the pattern
        _wait(query, "discovery", lambda: _planned(query, late_split))
        _produce_at(reference_broker, f"{prefix}-b", 0, base - HOUR_MS)
        began = time.monotonic()
        # match=: any other failure (Spark's worker start limit on a loaded machine) surfaces whole
        late = f"split {late_split} holds {NEW_RECORDS} records older than the event-time cut"
        cont = "Set eventTime.failOnLateSplit=false to read them and continue"
        with pytest.raises(StreamingQueryException, match=f"(?s){re.escape(late)}.*{re.escape(cont)}"):
            if not query.awaitTermination(60):  # raises the query's failure
                pytest.fail("the query did not fail within 60 s of the late records")
        print(f"\nthe query failed {time.monotonic() - began:.1f} s after the late records were written")
    finally:
        query.stop()
