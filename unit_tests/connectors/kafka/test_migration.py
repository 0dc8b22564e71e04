"""startingOffsets from a Spark Kafka query's checkpoint (``offsets/`` v1 and ``commits/``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from connector_base import ConnectorError
from connectors.kafka.migration import main, starting_offsets_from_checkpoint

# the shape Spark's OffsetSeqLog writes: version, batch metadata, one line per source
METADATA = json.dumps(
    {
        "batchWatermarkMs": 0,
        "batchTimestampMs": 1700000000123,
        "conf": {"spark.sql.shuffle.partitions": "200", "spark.sql.streaming.multipleWatermarkPolicy": "min"},
    }
)


def _checkpoint(root: Path, batches: dict[int, list[str]], committed: list[int]) -> Path:
    (root / "offsets").mkdir(parents=True)
    (root / "commits").mkdir()
    for batch, sources in batches.items():
        (root / "offsets" / str(batch)).write_text("\n".join(["v1", METADATA, *sources]))
    for batch in committed:
        (root / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}')
    (root / "metadata").write_text('{"id":"6f1f5b5e-0000-4000-8000-000000000000"}')
    return root


def test_the_last_committed_batch_gives_the_offsets(tmp_path: Path) -> None:
    root = _checkpoint(
        tmp_path,
        {
            0: ['{"orders":{"1":5,"0":7}}'],
            1: ['{"orders":{"1":50,"0":70,"10":3}}'],
            2: ['{"orders":{"1":90,"0":99,"10":4}}'],  # planned, never finished: re-read from batch 1's end
        },
        committed=[0, 1],
    )
    assert starting_offsets_from_checkpoint(root) == '{"orders":{"0":70,"1":50,"10":3}}'


def test_a_query_with_several_sources_names_the_kafka_one(tmp_path: Path) -> None:
    root = _checkpoint(tmp_path, {0: ["-", "12", '{"a":{"0":1}}', '{"b":{"0":2}}']}, committed=[0])
    with pytest.raises(ConnectorError, match="2 Kafka source offsets"):
        starting_offsets_from_checkpoint(root)
    assert starting_offsets_from_checkpoint(root, source=3) == '{"b":{"0":2}}'
    with pytest.raises(ConnectorError, match="source 1 does not hold Kafka offsets"):
        starting_offsets_from_checkpoint(root, source=1)


def test_nothing_finished_or_not_a_checkpoint_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConnectorError, match="no offsets"):
        starting_offsets_from_checkpoint(tmp_path)
    root = _checkpoint(tmp_path / "q", {0: ['{"t":{"0":1}}']}, committed=[])
    with pytest.raises(ConnectorError, match="startingOffsets"):
        starting_offsets_from_checkpoint(root)


def test_an_unknown_log_version_is_refused(tmp_path: Path) -> None:
    root = _checkpoint(tmp_path, {0: ['{"t":{"0":1}}']}, committed=[0])
    (root / "offsets" / "0").write_text("v9\n{}\n{}")
    with pytest.raises(ConnectorError, match="v9"):
        starting_offsets_from_checkpoint(root)


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _checkpoint(tmp_path, {0: ['{"t":{"0":1}}']}, committed=[0])
    assert main([str(root)]) == 0
    assert capsys.readouterr().out.strip() == '{"t":{"0":1}}'
    assert main([str(tmp_path / "missing")]) == 1
    assert "no offsets" in capsys.readouterr().err


GOLDEN = Path(__file__).parent / "golden" / "spark_kafka_checkpoint"
"""Written by Spark itself: pyspark 4.3.0 with spark-sql-kafka-0-10 4.2.0 (sparkflow_testing.spark),
``readStream.format("kafka")`` on topic ``orders`` (3 partitions holding 5, 3 and 7 records),
``startingOffsets=earliest``, ``maxOffsetsPerTrigger=9``, ``Trigger.AvailableNow``, ``noop`` sink: two
batches, ending at 3/1/4 and 5/3/7 (Spark's rate limit rounds 9 x 5/15, 9 x 3/15 and 9 x 7/15 down to
3 + 1 + 4 = 8 records). The ``.crc`` files and ``sources/`` are left out."""


def test_a_checkpoint_written_by_spark_kafka(tmp_path: Path) -> None:
    assert starting_offsets_from_checkpoint(GOLDEN) == '{"orders":{"0":5,"1":3,"2":7}}'
    copy = tmp_path / "ckpt"
    shutil.copytree(GOLDEN, copy)
    (copy / "commits" / "1").unlink()  # batch 1 planned but not finished: it is read again
    assert starting_offsets_from_checkpoint(copy) == '{"orders":{"0":3,"1":1,"2":4}}'
