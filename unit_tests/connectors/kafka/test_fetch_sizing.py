"""``fetch_sizing``: a bounded task's fetch size from its ranges' records and what fetches carried."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connectors.kafka import fetch_sizing
from connectors.kafka.fetch_sizing import MAX_FETCH_BYTES, MIN_FETCH_BYTES
from connectors.kafka.options import KafkaSourceOptions


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    fetch_sizing.forget()
    yield
    fetch_sizing.forget()


def test_a_topic_not_seen_fetches_the_most() -> None:
    assert fetch_sizing.fetch_bytes([("t", 10)]) == MAX_FETCH_BYTES
    fetch_sizing.observe("seen", MAX_FETCH_BYTES, 36_000)
    # one range of a topic not seen yet is enough to fetch the most
    assert fetch_sizing.fetch_bytes([("seen", 10), ("other", 10)]) == MAX_FETCH_BYTES


def test_the_largest_range_by_its_topics_records_per_byte_rounded_up_to_a_power_of_two() -> None:
    fetch_sizing.observe("random", MAX_FETCH_BYTES, 36_000)  # ~233 bytes per record on the wire
    fetch_sizing.observe("lz4", MAX_FETCH_BYTES, 360_000)  # ten times denser
    assert fetch_sizing.fetch_bytes([("random", 10_000)]) == 4 * 1024 * 1024  # 2.3 MB
    assert fetch_sizing.fetch_bytes([("lz4", 10_000)]) == 256 * 1024  # 233 KB
    assert fetch_sizing.fetch_bytes([("lz4", 2_000)]) == 64 * 1024  # 47 KB
    assert fetch_sizing.fetch_bytes([("lz4", 10_000), ("random", 5_000)]) == 2 * 1024 * 1024
    assert fetch_sizing.fetch_bytes([("random", 1)]) == MIN_FETCH_BYTES
    assert fetch_sizing.fetch_bytes([("random", 10_000_000)]) == MAX_FETCH_BYTES


def test_observations_move_the_estimate_halfway() -> None:
    fetch_sizing.observe("t", 1_000_000, 1_000)
    assert fetch_sizing.records_per_byte("t") == pytest.approx(0.001)
    fetch_sizing.observe("t", 1_000_000, 3_000)
    assert fetch_sizing.records_per_byte("t") == pytest.approx(0.002)
    fetch_sizing.observe("t", 0, 5)  # nothing learned from an empty or impossible count
    fetch_sizing.observe("t", 1_000, 0)
    assert fetch_sizing.records_per_byte("t") == pytest.approx(0.002)


def test_prefetch_depth_stays_within_the_largest_range() -> None:
    assert fetch_sizing.fetch_settings([("t", 10_000)]) == {}  # not seen: the consumer's defaults
    fetch_sizing.observe("t", MAX_FETCH_BYTES, 36_000)
    assert fetch_sizing.fetch_settings([("t", 100_000)]) == {}  # the largest fetch: the defaults
    assert fetch_sizing.fetch_settings([("t", 10_000), ("t", 300)]) == {
        "max.partition.fetch.bytes": 4 * 1024 * 1024,
        "queued.min.messages": 8_192,  # a fetch that brings the 10,000 stops the prefetching
    }
    assert fetch_sizing.queued_min_messages([("t", 5)]) == 1_024
    assert fetch_sizing.queued_min_messages([("t", 16_384)]) == 16_384
    assert fetch_sizing.queued_min_messages([("t", 10_000_000)]) == 131_072


def test_the_users_settings_win() -> None:
    sized = {"max.partition.fetch.bytes": MIN_FETCH_BYTES, "queued.min.messages": 2_048}
    opts = KafkaSourceOptions.parse({"kafka.bootstrap.servers": "b:9092", "subscribe": "a"}, False)
    conf = opts.consumer_config(sizing=sized)
    assert (conf["max.partition.fetch.bytes"], conf["queued.min.messages"]) == (MIN_FETCH_BYTES, 2_048)
    assert opts.consumer_config()["max.partition.fetch.bytes"] == MAX_FETCH_BYTES
    assert "queued.min.messages" not in opts.consumer_config()
    users = KafkaSourceOptions.parse(
        {
            "kafka.bootstrap.servers": "b:9092",
            "subscribe": "a",
            "kafka.max.partition.fetch.bytes": "1048576",
            "kafka.queued.min.messages": "50000",
        },
        False,
    )
    conf = users.consumer_config(sizing=sized)
    assert (conf["max.partition.fetch.bytes"], conf["queued.min.messages"]) == ("1048576", "50000")
