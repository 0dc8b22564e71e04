"""``kafka-unified`` passes the connector test kit on every broker that can run here."""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest

from connector_base.testing import SourceTestContext, SourceTestSuite
from connectors.kafka import KafkaSource, KafkaSourceOptions
from connectors.kafka.split import KafkaPartitionSplit
from sparkflow_testing.kafka.broker import Gap, KafkaBroker

PARTITIONS = 3
GOLDEN = Path(__file__).parents[3] / "unit_tests" / "connectors" / "kafka" / "golden"


class KafkaTestContext(SourceTestContext):
    spark_format = "kafka-unified"
    max_records_option = "maxOffsetsPerTrigger"

    def __init__(self, broker: KafkaBroker) -> None:
        self.broker = broker
        self.topic = broker.create_topic(PARTITIONS)
        self.partitions = PARTITIONS
        self.written = 0
        self.supports_new_splits = Gap.CREATE_PARTITIONS not in broker.gaps
        self.new_splits_gap = f"{broker.kind}: {Gap.CREATE_PARTITIONS.value}"

    def _options(self, continuous: bool) -> dict[str, str]:
        return {
            "kafka.bootstrap.servers": self.broker.bootstrap,
            "subscribe": self.topic,
            "startingOffsets": "earliest",
        }

    def create_source(self, continuous: bool) -> KafkaSource:
        opts = self._options(continuous)
        if continuous:
            opts["partitionDiscoveryIntervalMs"] = "200"
        # fetches of 50 records: a 200-record partition takes several, so a mid-split snapshot exists
        opts["consumeBatchSize"] = "50"
        return KafkaSource(KafkaSourceOptions.parse(opts, streaming=continuous))

    def _values(self, count: int) -> list[bytes]:
        values = [f"r-{self.written + i}".encode() for i in range(count)]
        self.written += count
        return values

    def write_records(self, count: int) -> list[Any]:
        values = self._values(count)
        self.broker.produce(self.topic, values)
        return values

    def add_split(self, count: int) -> list[Any]:
        from confluent_kafka.admin import NewPartitions

        admin = self.broker.admin()
        self.partitions += 1
        for f in admin.create_partitions([NewPartitions(self.topic, self.partitions)]).values():
            f.result(30)
        self.broker.wait_for_partitions(self.topic, self.partitions)
        values = self._values(count)
        self.broker.produce(self.topic, values, partition=self.partitions - 1)
        return values

    def spark_options(self, continuous: bool) -> dict[str, str]:
        return {**self._options(continuous), "maxOffsetsPerTrigger": "250"}

    def split_golden_files(self) -> dict[str, Any]:
        return {str(GOLDEN / "partition_split_v1.json"): KafkaPartitionSplit("orders", 2, 1200, 5000)}

    def invalid_options(self) -> list[tuple[dict[str, str], str]]:
        base = {"kafka.bootstrap.servers": self.broker.bootstrap}
        return [
            ({**base, "subscribe": self.topic, "assign": '{"a":[0]}'}, "exactly one of"),
            (
                {**base, "subscribe": self.topic, "kafka.auto.offset.reset": "earliest"},
                "'kafka.auto.offset.reset'",
            ),
            ({**base, "subscribe": self.topic, "startingOffsets": "newest"}, "'startingOffsets'"),
            ({**base, "subscribe": self.topic, "minPartitions": "0"}, "'minPartitions'"),
            ({"subscribe": self.topic}, "'kafka.bootstrap.servers'"),
            ({**base, "subscribe": self.topic, "colour": "red"}, "'colour'"),
        ]

    def key(self, record: Any) -> Hashable:
        if isinstance(record, bytes):
            return record
        if hasattr(record, "asDict"):
            return bytes(record["value"])
        return bytes(record[1])


class TestKafkaConnectorKit(SourceTestSuite):
    @pytest.fixture
    def source_context(self, kafka_cluster: KafkaBroker) -> KafkaTestContext:
        return KafkaTestContext(kafka_cluster)
