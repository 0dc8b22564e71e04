"""``KafkaSplitPlanner``'s event-time lookups against real Kafka (no Spark)."""

from __future__ import annotations

import pytest

from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.planner import KafkaSplitPlanner
from connectors.kafka.split import KafkaPartitionSplit
from sparkflow_testing.kafka.broker import KafkaBroker

pytestmark = [pytest.mark.integration]

BASE = 1_700_000_000_000


def test_positions_heads_and_times_by_record_timestamp(reference_broker: KafkaBroker) -> None:
    if reference_broker.kind != "apache-kafka":
        pytest.skip("offsets by timestamp and max timestamps are checked on real Apache Kafka")
    topic = reference_broker.create_topic(2)
    reference_broker.produce(topic, [b"x"] * 10, partition=0, timestamps=[BASE + 1000 * i for i in range(10)])
    options = KafkaSourceOptions.parse(
        {"kafka.bootstrap.servers": reference_broker.bootstrap, "subscribe": topic}, streaming=True
    )
    planner = KafkaSplitPlanner(options)
    planner.open()
    try:
        p0, p1 = KafkaPartitionSplit(topic, 0, 0), KafkaPartitionSplit(topic, 1, 0)
        ranges = {"p0": (p0, 2, 10), "p1": (p1, 0, 0)}
        # the first record at or after the time, clamped into [start, end]
        assert planner.positions_at_time(ranges, BASE + 4500) == {"p0": 5, "p1": 0}
        assert planner.positions_at_time(ranges, BASE) == {"p0": 2, "p1": 0}
        assert planner.positions_at_time(ranges, BASE + 99_000) == {"p0": 10, "p1": 0}
        assert planner.head_times({"p0": (p0, 10), "p1": (p1, 0)}) == {"p0": BASE + 9000, "p1": None}
        assert planner.times_at({"p0": (p0, 3), "p1": (p1, 0)}) == {"p0": BASE + 3000, "p1": None}
    finally:
        planner.close()
