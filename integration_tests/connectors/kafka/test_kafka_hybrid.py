"""``format("hybrid")``: history from Parquet files, then Kafka, on real Kafka (the reference broker).

The files hold records 0..N-1, the topic holds records from before the files' end (an overlap) on;
the next source starts after the files' maximum event time, so every record comes out exactly once.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from connector_base import InvalidOptionError
from connector_base.testing.driver_process import DriverProcess, log_entries
from integration_tests.connectors.kafka.hybrid_data import fill_topic, hybrid_options, write_history
from sparkflow_testing.kafka.broker import KafkaBroker

pytestmark = [pytest.mark.spark, pytest.mark.integration]

FILES, OVERLAP, TOTAL = 300, 100, 500
"""Records 0..299 in files; the topic holds 200..499 (100 of them also in the files)."""

DRIVER = Path(__file__).resolve().parents[2] / "connector_base" / "kill_driver.py"
COLUMNS = ["--columns", "value,partition,offset"]


def _expected(total: int = TOTAL) -> list[bytes]:
    return sorted(f"r{i}".encode() for i in range(total))


def _setup(broker: KafkaBroker, tmp_path: Path, **extra: str) -> dict[str, str]:
    history = write_history(tmp_path / "history", FILES)
    topic = fill_topic(broker, FILES - OVERLAP, TOTAL)
    return hybrid_options(history, broker.bootstrap, topic, **extra)


@pytest.mark.timeout(300)
def test_batch_read_has_each_record_once(spark: Any, reference_broker: KafkaBroker, tmp_path: Path) -> None:
    options = _setup(reference_broker, tmp_path)
    rows = spark.read.format("hybrid").options(**options).load().collect()
    assert sorted(bytes(r["value"]) for r in rows) == _expected()
    from_files = [r for r in rows if r["partition"] is None]
    assert sorted(bytes(r["value"]) for r in from_files) == sorted(f"r{i}".encode() for i in range(FILES))
    assert all(r["topic"] is None and r["key"] is not None and r["timestamp"] is not None for r in from_files)


def _stage(chk: Path, batch_id: int) -> int:
    """The active stage in the offset Spark logged for ``batch_id``."""
    lines = (chk / "offsets" / str(batch_id)).read_text().splitlines()
    offset = json.loads(lines[2])
    return int(offset["enumerator"]["data"]["stage"])


def _latest_stage(chk: Path) -> int:
    ids = [int(p.name) for p in (chk / "offsets").glob("[0-9]*")] if (chk / "offsets").exists() else []
    return _stage(chk, max(ids)) if ids else -1


@pytest.mark.timeout(300)
def test_available_now_stream_switches_in_a_batch_of_its_own(
    spark: Any, reference_broker: KafkaBroker, tmp_path: Path
) -> None:
    options = _setup(reference_broker, tmp_path, **{"kafka-unified.maxOffsetsPerTrigger": "120"})
    seen: dict[int, tuple[list[bytes], int, int]] = {}

    def record(df: Any, batch_id: int) -> None:
        rows = df.select("value", "partition").collect()
        files = sum(1 for r in rows if r["partition"] is None)
        seen[batch_id] = ([bytes(r["value"]) for r in rows], files, len(rows) - files)

    chk = tmp_path / "chk"
    query = (
        spark.readStream.format("hybrid")
        .options(**options)
        .load()
        .writeStream.foreachBatch(record)
        .option("checkpointLocation", str(chk))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(240)
    assert query.exception() is None, query.exception()
    assert sorted(v for values, _f, _k in seen.values() for v in values) == _expected()
    for batch_id, (_values, files, kafka) in seen.items():
        assert not (files and kafka), (
            f"batch {batch_id} read both sources: {files} file rows, {kafka} Kafka rows"
        )
    batches = sorted(int(p.name) for p in (chk / "offsets").glob("[0-9]*"))
    stages = {b: _stage(chk, b) for b in batches}
    switch = min(b for b, s in stages.items() if s == 1)
    assert switch > 0 and stages[switch - 1] == 0
    assert not seen.get(switch, ([], 0, 0))[0], "the switch batch read records"
    assert all(seen.get(b, ([], 0, 0))[2] == 0 for b in batches if b < switch)
    assert sum(kafka for _v, _f, kafka in seen.values()) == TOTAL - FILES
    assert len([b for b in batches if b > switch]) >= 2, (
        "maxOffsetsPerTrigger=120 did not split the Kafka stage"
    )


@pytest.mark.timeout(900)
def test_driver_killed_at_the_switch_recovers_exactly_once(
    spark: Any, reference_broker: KafkaBroker, tmp_path: Path
) -> None:
    options = _setup(reference_broker, tmp_path, **{"kafka-unified.maxOffsetsPerTrigger": "60"})
    out, chk = tmp_path / "out", tmp_path / "chk"
    # one trigger a second: the driver is killed within that second of the switch batch
    driver = DriverProcess(
        DRIVER, ["hybrid", str(chk), str(out), json.dumps(options), *COLUMNS, "--trigger-ms", "1000"]
    )
    driver.wait_for(lambda: _latest_stage(chk) == 1)  # the switch batch is logged
    driver.kill()
    offsets, commits = log_entries(chk / "offsets"), log_entries(chk / "commits")
    assert _stage(chk, offsets - 1) == 1 and _stage(chk, offsets - 2) == 0, "killed later than the switch"
    # live records arrive while the driver is down
    topic = options["kafka-unified.subscribe"]
    reference_broker.produce(topic, [f"r{i}".encode() for i in range(TOTAL, TOTAL + 100)])
    driver = DriverProcess(DRIVER, ["hybrid", str(chk), str(out), json.dumps(options), *COLUMNS])
    assert driver.finish(600), (
        f"the restarted driver failed (killed with {offsets} offsets, {commits} commits)"
    )
    rows = spark.read.parquet(str(out)).collect()  # only committed files (the sink's metadata log)
    values = [bytes(r["value"]) for r in rows]
    assert len(values) == len(set(values)), "duplicated records"
    assert sorted(values) == _expected(TOTAL + 100)


def _load_fails(spark: Any, options: dict[str, str], *fragments: str) -> None:
    """``load()`` fails with a message holding ``fragments`` in this order (match=: any other failure,
    such as Spark's worker start limit on a loaded machine, surfaces whole)."""
    with pytest.raises(Exception, match="(?s)" + ".*".join(re.escape(f) for f in fragments)):
        spark.read.format("hybrid").options(**options).load()


@pytest.mark.timeout(300)
def test_bad_hybrid_options_fail_at_load(spark: Any, reference_broker: KafkaBroker, tmp_path: Path) -> None:
    history = write_history(tmp_path / "history", 10, files=1)
    good = hybrid_options(history, reference_broker.bootstrap, "any-topic")
    _load_fails(
        spark,
        {**good, "files-unified.continuous": "true"},
        "'sources'",
        "bounded",
        "files-unified.continuous",
    )
    _load_fails(
        spark,
        {**good, "kafka-unified.startingOffsets": "earliest"},
        "'kafka-unified.startingOffsets'",
        "hybrid.switchStart",
    )
    _load_fails(spark, {**good, "path": history}, "'path'")
    _load_fails(spark, {**good, "sources": "files-unified,nosuch-format"}, "'sources'")
    _load_fails(spark, {**good, "hybrid.eventTimeColumn": "value"}, "'hybrid.eventTimeColumn'")
    _load_fails(spark, {**good, "hybrid.switchStart": "timestamp"}, "'hybrid.switchTimestamp'")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"value": [b"x"], "timestamp": [1], "extra": ["y"]}), tmp_path / "extra.parquet")
    _load_fails(
        spark,
        {**good, "files-unified.path": str(tmp_path / "extra.parquet")},
        "'sources'",
        "column 'extra' is not in the hybrid schema",
    )
    with pytest.raises(InvalidOptionError, match="sources"):
        from connectors.hybrid import HybridOptions

        HybridOptions.parse({"sources": "kafka-unified"})
