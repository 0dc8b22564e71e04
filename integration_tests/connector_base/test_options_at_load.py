"""One Spark-level check per connector that bad options fail early with our error last (issue 17 §3).

Without a user schema Spark asks the data source for its schema at ``load()``: bad options fail
there. With a user schema Spark calls no Python at ``load()`` or ``start()`` (``start()`` returns
before the query builds its source); the query then fails as it initializes its source, before any
micro-batch, and the error Spark reports ends with ours, not PySpark's ``UnboundLocalError``.
The exhaustive option checks are unit tests (unit_tests/connectors/test_option_properties.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from connectors.kafka.datasource import kafka_schema
from connectors.kinesis.datasource import KinesisDataSource
from connectors.pravega.datasource import PravegaDataSource

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

CASES = {
    "kafka-unified": (
        {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t", "maxOffsetsPerTrigger": "-5"},
        "maxOffsetsPerTrigger",
    ),
    "kinesis-unified": (
        {"streamName": "s", "region": "us-east-1", "maxRecordsPerTrigger": "x"},
        "maxRecordsPerTrigger",
    ),
    "pravega": (
        {"controller": "tcp://127.0.0.1:9", "scope": "s", "stream": "t", "maxEventsPerTrigger": "0"},
        "maxEventsPerTrigger",
    ),
    "files-unified": ({"format": "jsonl", "maxFilesPerTrigger": "0"}, "maxFilesPerTrigger"),
    "sequence-unified": ({"partitions": "-1"}, "partitions"),
}


def _user_schema(fmt: str) -> Any:
    match fmt:
        case "kafka-unified":
            return kafka_schema(False)
        case "kinesis-unified":
            return KinesisDataSource({"streamName": "s", "region": "us-east-1"}).default_schema()
        case "pravega":
            return PravegaDataSource(
                {"controller": "tcp://127.0.0.1:9", "scope": "s", "stream": "t"}
            ).default_schema()
        case "files-unified":
            return "id LONG"
        case _:
            return "id LONG"


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_bad_option_fails_at_load_and_at_stream_start_with_our_error_last(
    spark: Any, fmt: str, tmp_path: Path
) -> None:
    options, name = CASES[fmt]
    if fmt == "files-unified":
        (tmp_path / "a.jsonl").write_text('{"id": 1}\n')
        options = {**options, "path": str(tmp_path)}
    # match=: any other failure (Spark's worker start limit on a loaded machine) surfaces whole
    with pytest.raises(Exception, match=rf"(?s)InvalidOptionError.*(?i:{re.escape(name)})"):
        spark.read.format(fmt).options(**options).load()

    query = (
        spark.readStream.format(fmt)
        .options(**options)
        .schema(_user_schema(fmt))
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "chk"))
        .start()
    )
    try:
        with pytest.raises(Exception, match=rf"(?i)for option '{re.escape(name)}'") as at_start:
            query.awaitTermination(120)
    finally:
        query.stop()
    assert "UnboundLocalError" not in str(at_start.value)
    assert query.lastProgress is None  # no micro-batch ran
