"""Bad input on kinesis-unified in Spark (issue 17 §3): a restart of a streaming query on another
stream, and a stream that does not exist, each failing with a message that says what is wrong."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from integration_tests.connectors.kinesis.helpers import options, write
from integration_tests.connectors.parquet_sink import run_available_now
from sparkflow_testing.kinesis.endpoint import KinesisEndpoint, available_endpoint_kinds

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(300)]


def _available_now(spark: Any, opts: dict[str, str], checkpoint: Path) -> int:
    out = checkpoint.parent / f"out-{checkpoint.name}"
    run_available_now(
        spark.readStream.format("kinesis-unified").options(**opts).load().select("data"), out, checkpoint
    )
    return spark.read.parquet(str(out)).count() if out.exists() else 0


def test_restart_on_another_stream_fails_naming_both(
    spark: Any, kinesis_endpoint: KinesisEndpoint, tmp_path: Path
) -> None:
    if kinesis_endpoint.kind != available_endpoint_kinds()[0]:
        pytest.skip("runs on the primary endpoint only, to keep the suite's time modest")
    first, second = kinesis_endpoint.create_stream(1), kinesis_endpoint.create_stream(1)
    write(kinesis_endpoint, first, 3)
    write(kinesis_endpoint, second, 2)
    checkpoint = tmp_path / "chk"
    assert _available_now(spark, options(kinesis_endpoint, first), checkpoint) == 3
    # match=: any other failure (Spark's worker start limit on a loaded machine) surfaces whole
    with pytest.raises(
        Exception,
        match=f"(?s)checkpoint was written for another source.*{re.escape(first)}.*{re.escape(second)}",
    ):
        _available_now(spark, options(kinesis_endpoint, second), checkpoint)
    # the first stream again: the checkpoint goes on where it stopped (nothing read twice)
    write(kinesis_endpoint, first, 1)
    assert _available_now(spark, options(kinesis_endpoint, first), checkpoint) == 4


def test_a_stream_that_does_not_exist_fails_at_load_naming_it(
    spark: Any, kinesis_endpoint: KinesisEndpoint, tmp_path: Path
) -> None:
    missing = "missing-" + tmp_path.name.replace("_", "-")[-40:]
    opts = options(kinesis_endpoint, missing)
    with pytest.raises(Exception, match=missing) as batch:
        spark.read.format("kinesis-unified").options(**opts).load().collect()
    assert "streamName" in str(batch.value), str(batch.value)[-800:]
    with pytest.raises(Exception, match=missing) as streaming:
        _available_now(spark, opts, tmp_path / "chk")
    assert "streamName" in str(streaming.value), str(streaming.value)[-800:]
