"""The event-time cut on Spark with real Kafka: one partition an hour behind the other.

Spark's watermark is the largest event time of a batch minus the delay; with ``maxOffsetsPerTrigger``
spread over both partitions, the lagging partition's rows fall behind it and are dropped as late.
With ``eventTime.alignment=cut`` every batch reads both partitions up to one event time, so none is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connector_base.testing.driver_process import DriverProcess, log_entries
from integration_tests.connectors.kafka.helpers import stream
from integration_tests.connectors.spark_batches import logged_offsets
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.kafka.event_time_skew import LateCount, skewed_topic, watermarked_counts

pytestmark = [pytest.mark.spark, pytest.mark.integration]

RECORDS = 3000
DRIVER = Path(__file__).with_name("event_time_driver.py")
LIMIT = "500"


def _apache(broker: KafkaBroker) -> None:
    if broker.kind != "apache-kafka":
        pytest.skip("measured on real Apache Kafka only (offsets by timestamp, max timestamps)")


@pytest.fixture(scope="module")
def skewed(reference_broker: KafkaBroker) -> str:
    _apache(reference_broker)
    return skewed_topic(reference_broker, RECORDS)


def _df(spark: Any, broker: KafkaBroker, topic: str, **extra: str) -> Any:
    return stream(
        spark, broker, subscribe=topic, startingOffsets="earliest", maxOffsetsPerTrigger=LIMIT, **extra
    ).load()


CUT = {"eventTime.alignment": "cut", "alignment.maxDrift": "1m"}
"""As event_time_driver.py sets them: the kill test compares its batches with this run's."""


@pytest.fixture(scope="module")
def cut_run(spark: Any, reference_broker: KafkaBroker, skewed: str, tmp_path_factory: Any) -> LateCount:
    """The watermarked query with the cut, run once to the end of the data."""
    df = _df(spark, reference_broker, skewed, **CUT)
    return watermarked_counts(spark, df, str(tmp_path_factory.mktemp("cut")))


def _offsets(checkpoint: Path) -> list[dict[str, Any]]:
    """The source offset of every micro-batch in the offset log, in order."""
    return list(logged_offsets(checkpoint).values())


@pytest.mark.timeout(600)
def test_cut_loses_no_row_to_the_watermark_where_offsets_alone_lose_many(
    spark: Any, reference_broker: KafkaBroker, skewed: str, cut_run: LateCount, tmp_path: Path
) -> None:
    off = watermarked_counts(spark, _df(spark, reference_broker, skewed), str(tmp_path))
    cut = cut_run
    print(
        f"\nkafka-unified, 2 x {RECORDS} records, one partition 1 h behind, maxOffsetsPerTrigger={LIMIT}, "
        f"10-minute watermark: off dropped {off.dropped} rows (counted {off.counted}, {off.batches} batches, "
        f"{off.seconds:.1f} s); cut dropped {cut.dropped} (counted {cut.counted}, {cut.batches} batches, "
        f"{cut.seconds:.1f} s)"
    )
    assert cut.dropped == 0
    assert cut.counted == 2 * RECORDS
    assert off.dropped > 0 and off.counted < 2 * RECORDS
    assert cut.batches >= 2 * RECORDS // int(LIMIT)  # the read limit still holds under the cut
    # the offsets (version 2) carry the cut, which never decreases, and each split's event time
    offsets = _offsets(Path(cut.checkpoint))
    cuts = [o["cut"]["t"] for o in offsets if o.get("v") == 2]
    assert len(cuts) == len(offsets) and cuts == sorted(cuts), cuts
    assert all(set(o["cut"]["et"]) == set(o["splits"]) for o in offsets)
    assert cut.latest_reports and all('"eventTime"' in (r or "") for r in cut.latest_reports)


def test_cut_refuses_a_column_the_driver_cannot_see(spark: Any, reference_broker: KafkaBroker) -> None:
    with pytest.raises(Exception, match="eventTime.alignment") as info:
        stream(
            spark,
            reference_broker,
            subscribe="t",
            **{"eventTime.alignment": "cut", "eventTime.column": "value"},
        ).load()
    assert "record timestamp" in str(info.value)


def _batches(checkpoint: Path) -> list[tuple[Any, ...]]:
    """Each logged micro-batch that read data: its cut and every split's end position."""
    out: list[tuple[Any, ...]] = []
    for o in _offsets(checkpoint):
        batch = (o["cut"]["t"], tuple(sorted((sid, e["pos"]) for sid, e in o["splits"].items())))
        if not out or out[-1] != batch:  # a stateful query's no-data batches repeat the offset
            out.append(batch)
    return out


@pytest.mark.timeout(900)
def test_driver_killed_mid_run_restarts_with_identical_batches(
    spark: Any, reference_broker: KafkaBroker, skewed: str, cut_run: LateCount, tmp_path: Path
) -> None:
    out, chk = tmp_path / "out", tmp_path / "chk"
    args = [reference_broker.bootstrap, skewed, str(out), str(chk)]
    driver = DriverProcess(DRIVER, args)
    try:
        driver.wait_for(lambda: log_entries(chk / "commits") >= 2, timeout_s=600)
        driver.kill()  # mid-run: batches planned and committed, more to come
    finally:
        driver.kill()
    assert DriverProcess(DRIVER, args).finish(600), "the restarted driver did not finish"
    assert _batches(chk) == _batches(Path(cut_run.checkpoint))  # the same source options, run whole
    rows = spark.read.parquet(str(out)).collect()
    keys = [(r["partition"], r["offset"]) for r in rows]
    assert len(keys) == len(set(keys)) == 2 * RECORDS
