"""``eventTime.alignment=cut`` on Spark for ``files-unified``: Parquet row-group statistics.

Files are sorted by a ``ts`` timestamp column and written in row groups of ``GROUP`` rows. The cut
reads a row group once every earlier row group (by its max) of every file is read: a file an hour
behind is read before the file ahead, and with ``maxFilesPerTrigger=1`` two interleaved files take
turns; every row comes once and no batch reads a row at or after its cut.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from integration_tests.connectors.spark_batches import collect_batches, logged_offsets

FMT = "files-unified"
GROUP = 50
ROWS = 200
BASE = datetime(2026, 1, 1, tzinfo=UTC)
CUT = {"format": "parquet", "eventTime.alignment": "cut", "eventTime.column": "ts"}

pytestmark = pytest.mark.timeout(300)


def _write(directory: Path, name: str, first_s: int, step_s: int) -> None:
    ts = [BASE + timedelta(seconds=first_s + i * step_s) for i in range(ROWS)]
    table = pa.table(
        {"id": [f"{name}-{i}" for i in range(ROWS)], "ts": pa.array(ts, pa.timestamp("us", "UTC"))}
    )
    pq.write_table(table, directory / f"{name}.parquet", row_group_size=GROUP)


def _run(spark: Any, directory: Path, checkpoint: Path, **opts: str) -> list[tuple[int, str, datetime]]:
    df = spark.readStream.format(FMT).options(**opts).load(str(directory))
    return collect_batches(df, checkpoint, lambda batch_id, r: (batch_id, r["id"], r["ts"]))


def _cuts(checkpoint: Path) -> dict[int, int]:
    """Batch id -> the cut (epoch ms) of its end offset, from the offset log."""
    return {batch: offset["cut"]["t"] for batch, offset in logged_offsets(checkpoint).items()}


def _ms(t: datetime) -> int:
    aware = t if t.tzinfo is not None else t.replace(tzinfo=UTC)
    return (aware - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


def _check(rows: list[tuple[int, str, datetime]], checkpoint: Path, files: int) -> dict[int, set[str]]:
    ids = [r[1] for r in rows]
    assert len(ids) == files * ROWS and len(set(ids)) == len(ids), "a row was lost or read twice"
    cuts = _cuts(checkpoint)
    by_batch: dict[int, set[str]] = {}
    for batch, rid, ts in rows:
        assert _ms(ts) < cuts[batch], f"batch {batch} read {rid} at {ts}, at or after its cut {cuts[batch]}"
        by_batch.setdefault(batch, set()).add(rid.split("-")[0])
    return by_batch


def test_the_file_behind_is_read_before_the_file_ahead(spark: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _write(data, "ahead", 3_600, 1)
    _write(data, "behind", 0, 1)
    rows = _run(spark, data, tmp_path / "chk", **CUT)
    by_batch = _check(rows, tmp_path / "chk", 2)
    assert [by_batch[b] for b in sorted(by_batch)] == [{"behind"}, {"ahead"}]


def test_interleaved_files_take_turns_by_row_group(spark: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _write(data, "a", 0, 2)  # 0, 2, 4, ... s: row groups of 100 s
    _write(data, "b", 1, 2)  # 1, 3, 5, ... s
    rows = _run(spark, data, tmp_path / "chk", maxFilesPerTrigger="1", **CUT)
    by_batch = _check(rows, tmp_path / "chk", 2)
    assert len(by_batch) >= ROWS // GROUP, by_batch


def test_cut_needs_parquet_and_a_column(spark: Any, tmp_path: Path) -> None:
    for opts, named in (
        ({**CUT, "format": "csv"}, "parquet"),
        ({"format": "parquet", "eventTime.alignment": "cut"}, "eventTime.column"),
    ):
        with pytest.raises(Exception, match=named):
            spark.readStream.format(FMT).options(**opts).load(str(tmp_path))


def test_a_restarted_query_continues_from_the_logged_cut(spark: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _write(data, "a", 0, 2)
    _write(data, "b", 1, 2)
    opts = {**CUT, "maxFilesPerTrigger": "1"}
    seen: dict[int, list[tuple[str, datetime]]] = {}
    replays: list[int] = []

    def collect(df: Any, batch_id: int) -> None:
        got = sorted((r["id"], r["ts"]) for r in df.collect())
        if batch_id in seen:  # a batch run again after the restart reads the same rows
            replays.append(batch_id)
            assert got == seen[batch_id], f"batch {batch_id} read other rows when run again"
        seen[batch_id] = got

    def start(**trigger: Any) -> Any:
        return (
            spark.readStream.format(FMT)
            .options(**opts)
            .load(str(data))
            .writeStream.foreachBatch(collect)
            .option("checkpointLocation", str(tmp_path / "chk"))
            .trigger(**trigger)
            .start()
        )

    first = start(processingTime="200 milliseconds")
    try:
        deadline = time.monotonic() + 120
        while len(seen) < 2:
            assert first.exception() is None, first.exception()
            assert time.monotonic() < deadline, "no two batches within 120 s"
            time.sleep(0.2)
    finally:
        first.stop()
    second = start(availableNow=True)
    try:
        assert second.awaitTermination(180), "the AvailableNow query did not finish"
        assert second.exception() is None, second.exception()
    finally:
        second.stop()
    rows = [(b, rid, ts) for b, got in seen.items() for rid, ts in got]
    _check(rows, tmp_path / "chk", 2)
    cuts = _cuts(tmp_path / "chk")
    assert [cuts[b] for b in sorted(cuts)] == sorted(cuts[b] for b in cuts), "a cut went back"
