"""``kinesis-unified`` passes the connector test kit on every available endpoint."""

from __future__ import annotations

import uuid
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from connector_base.testing import SourceTestContext, SourceTestSuite
from connectors.kinesis import KinesisOptions, KinesisSource
from connectors.kinesis.positions import ShardPosition
from connectors.kinesis.split import KinesisShardSplit
from sparkflow_testing.kinesis.endpoint import Gap, KinesisEndpoint

SHARDS = 3
PUT_BATCH = 25
"""Records per PutRecords call: well under the kit's per-trigger limit (RECORDS // 8 = 75)."""
GOLDEN = Path(__file__).parents[3] / "unit_tests" / "connectors" / "kinesis" / "golden"


class KinesisTestContext(SourceTestContext):
    spark_format = "kinesis-unified"
    max_records_option = "maxRecordsPerTrigger"

    def __init__(self, endpoint: KinesisEndpoint) -> None:
        self.endpoint = endpoint
        self.stream = endpoint.create_stream(SHARDS)
        # moto routes records after a split to the closed parent: a new shard never gets records there
        gap = endpoint.gap_reason(Gap.RESHARDING_ROUTING)
        self.supports_new_splits = gap is None
        self.new_splits_gap = gap or ""
        self._n = 0

    def options(self, **extra: str) -> dict[str, str]:
        base = {
            "streamName": self.stream,
            "startingPosition": "TRIM_HORIZON",
            "cutSafetyMarginMs": "0",
            "shardDiscoveryIntervalMs": "300",
            # GetRecords of 50: a 200-record shard takes several fetches, so a failed reader leaves
            # records after its checkpoint (they were lost when its splits went to a finished reader)
            "maxRecordsPerFetch": "50",
        }
        return self.endpoint.options(**{**base, **extra})

    def create_source(self, continuous: bool) -> KinesisSource:
        return KinesisSource(KinesisOptions.parse(self.options()), bounded=not continuous)

    def write_records(self, count: int) -> list[Any]:
        records = []
        for _ in range(count):
            self._n += 1
            records.append((f"key-{self._n % 17}", f"{uuid.uuid4().hex}-{self._n}".encode()))
        # PutRecords calls of PUT_BATCH: a call's records share one arrival millisecond, and a
        # micro-batch's cut is a millisecond, so the per-trigger limit is exact only while no
        # millisecond holds more records than it (docs/kinesis.md, "Admission control")
        for start in range(0, len(records), PUT_BATCH):
            self.endpoint.put_records(self.stream, records[start : start + PUT_BATCH])
        return [(data, self.stream, "", "", key) for key, data in records]

    def add_split(self, count: int) -> list[Any]:
        shard = self.endpoint.open_shards(self.stream)[0]["ShardId"]
        self.endpoint.split_shard(self.stream, shard)
        return self.write_records(count)

    def spark_options(self, continuous: bool) -> Mapping[str, str]:
        return self.options(maxRecordsPerTrigger="250") if continuous else self.options()

    def split_golden_files(self) -> dict[str, Any]:
        after = ShardPosition.after_sequence_number(
            "49590338271490256608559692538361571095921575989136588898"
        )
        split = KinesisShardSplit(
            "orders",
            "shardId-000000000004",
            after,
            ShardPosition.shard_end(),
            ("shardId-000000000001",),
            True,
        )
        return {str(GOLDEN / "shard_split_v1.json"): split}

    def invalid_options(self) -> Sequence[tuple[Mapping[str, str], str]]:
        return [
            (self.options(startingPosition="EARLIEST"), "'startingPosition'"),
            (self.options(maxRecordsPerFetch="0"), "'maxRecordsPerFetch'"),
            ({"region": "us-east-1"}, "'streamName'"),
            (self.options(colour="red"), "'colour'"),
        ]

    def key(self, record: Any) -> Hashable:
        return (bytes(record[0]), record[4])


class TestKinesisConnector(SourceTestSuite):
    @pytest.fixture
    def source_context(self, kinesis_endpoint: KinesisEndpoint) -> KinesisTestContext:
        return KinesisTestContext(kinesis_endpoint)
