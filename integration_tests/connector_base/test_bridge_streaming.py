"""The Spark bridge's streaming contract, on the worked example connector."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest


def run_available_now(spark: Any, tmp_path: Path, name: str, options: dict[str, str]) -> Any:
    query = (
        spark.readStream.format("sequence-unified")
        .options(**options)
        .load()
        .writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / name))
        .trigger(availableNow=True)
        .start()
    )
    assert query.awaitTermination(180)
    assert query.exception() is None
    return query


@pytest.mark.timeout(300)
def test_available_now_runs_several_batches_honouring_the_limit(spark: Any, tmp_path: Path) -> None:
    opts = {"partitions": "2", "rowsPerPartition": "1000", "maxRecordsPerTrigger": "300"}
    query = run_available_now(spark, tmp_path, "an_limit", opts)
    rows = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert sum(rows) == 2000
    assert len(rows) == 7 and max(rows) == 300, rows
    assert spark.sql("select count(distinct partition, index) from an_limit").collect()[0][0] == 2000


@pytest.mark.timeout(300)
def test_offsets_are_versioned_json_checkpoints(spark: Any, tmp_path: Path) -> None:
    run_available_now(spark, tmp_path, "an_offsets", {"partitions": "2", "rowsPerPartition": "10"})
    offsets = sorted(
        (p for p in (tmp_path / "an_offsets" / "offsets").iterdir() if p.name.isdigit()),
        key=lambda p: int(p.name),
    )
    last = json.loads(offsets[-1].read_text().splitlines()[-1])
    assert last["v"] == 1
    assert last["enumerator"] == {"v": 1, "data": {"assigned": [0, 1]}}
    assert {sid: e["pos"] for sid, e in last["splits"].items()} == {"p0": 10, "p1": 10}


@pytest.mark.timeout(300)
def test_restarted_query_rebuilds_from_the_offset_log_and_continues(spark: Any, tmp_path: Path) -> None:
    opts = {"partitions": "3", "rowsPerPartition": "500", "maxRecordsPerTrigger": "200"}
    checkpoint = str(tmp_path / "restart")

    def start(trigger: dict[str, Any]) -> Any:
        return (
            spark.readStream.format("sequence-unified")
            .options(**opts)
            .load()
            .writeStream.format("parquet")
            .option("path", str(tmp_path / "out"))
            .option("checkpointLocation", checkpoint)
            .trigger(**trigger)
            .start()
        )

    first = start({"processingTime": "100 milliseconds"})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len([p for p in first.recentProgress if p["numInputRows"]]) < 2:
        time.sleep(0.2)
    first.stop()
    assert len([p for p in first.recentProgress if p["numInputRows"]]) >= 2, first.exception()
    second = start({"availableNow": True})
    assert second.awaitTermination(180)
    df = spark.read.parquet(str(tmp_path / "out"))
    assert df.count() == 1500
    assert df.select("partition", "index").distinct().count() == 1500


@pytest.mark.timeout(300)
def test_processing_time_trigger_uses_the_default_read_limit(spark: Any, tmp_path: Path) -> None:
    opts = {"partitions": "1", "rowsPerPartition": "1000", "maxRecordsPerTrigger": "400"}
    query = (
        spark.readStream.format("sequence-unified")
        .options(**opts)
        .load()
        .writeStream.format("memory")
        .queryName("pt_limit")
        .option("checkpointLocation", str(tmp_path / "pt"))
        .trigger(processingTime="100 milliseconds")
        .start()
    )
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    rows = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert rows == [400, 400, 200]


@pytest.mark.timeout(120)
def test_invalid_option_fails_when_the_stream_starts(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="maxRecordsPerTrigger"):
        (
            spark.readStream.format("sequence-unified")
            .option("maxRecordsPerTrigger", "-5")
            .load()
            .writeStream.format("memory")
            .queryName("bad")
            .option("checkpointLocation", str(tmp_path / "bad"))
            .start()
            .processAllAvailable()
        )
