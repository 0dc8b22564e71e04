"""The compiled reader's headers read from the record's bytes equal librdkafka's parse and confluent-kafka's.

``NativeConsumer`` reads each record's header section itself through a mirror of librdkafka's
private message struct (``native/kafka_reader/src/record_headers.rs``), falling back to
``rd_kafka_message_headers`` wherever the mirror's checks fail. These tests produce records of every
header shape to real Kafka, compressed and not, and compare the ``headers`` column of the fast path
with the fallback's (``raw_headers=False``) and with the headers confluent-kafka's consumer (the
Python reader's client) returns for the same records.
"""

from __future__ import annotations

from typing import Any

import pytest

from connectors.kafka.reader_choice import native_module
from sparkflow_testing.kafka.broker import KafkaBroker

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(native_module() is None, reason="the kafka-native wheel is missing (make native)"),
]

LONG = bytes(range(256)) * 2
SHAPES: list[tuple[bytes | None, list[tuple[str, bytes | None]] | None]] = [
    (b"v0", None),  # no headers
    (b"v1", [("trace", b"abc")]),
    (b"v2", [("k", b"1"), ("k", b"2"), ("other", b"3"), ("k", b"4")]),  # duplicates, in order
    (b"v3", [("null-valued", None)]),
    (b"v4", [("", b""), ("empty-value", b"")]),
    (b"v5", [(f"h{i:02d}", LONG[: i * 9]) for i in range(50)]),
    (None, [("on-a-tombstone", b"x")]),  # a null value: the fallback path
    (b"", [("on-an-empty-value", b"y")]),  # no payload pointer either: the fallback path
    (b"v8", [("schl\u00fcssel-\u03ba\u03bb\u03b5\u03b9\u03b4\u03af-\U0001f511", b"\xff\x00\xfe")]),
    (b"v9" * 5000, [("after-a-large-value", b"z")]),
]


def _produce(broker: KafkaBroker, topic: str, compression: str) -> None:
    producer = broker.producer(**{"compression.type": compression, "linger.ms": 50})
    for round_ in range(3):  # several records per batch, each shape more than once
        for i, (value, headers) in enumerate(SHAPES):
            producer.produce(topic, key=f"{round_}-{i}".encode(), value=value, headers=headers, partition=0)
    assert producer.flush(60) == 0


def _native_headers(broker: KafkaBroker, topic: str, raw: bool) -> tuple[list[Any], int]:
    """The headers column of every record, and how many records' headers were read from bytes."""
    module = native_module()
    consumer = module.NativeConsumer(
        [
            ("bootstrap.servers", broker.bootstrap),
            ("group.id", f"headers-{topic}"),
            ("enable.auto.commit", "false"),
            ("enable.partition.eof", "true"),
        ],
        raw_headers=raw,
    )
    try:
        consumer.incremental_assign([(topic, 0, 0)])
        rows: list[Any] = []
        for _ in range(600):
            events = consumer.consume(1000, 100, True)
            for event in events:
                if event[0] == "records":
                    rows.extend(event[5].column(7).to_pylist())
                assert event[0] != "error", event
            if any(e[0] == "eof" for e in events) and len(rows) == 3 * len(SHAPES):
                return rows, consumer.headers_read_raw
        raise AssertionError(f"read {len(rows)} of {3 * len(SHAPES)} records")
    finally:
        consumer.close()


def _confluent_headers(broker: KafkaBroker, topic: str) -> list[Any]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": f"headers-{topic}", "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        rows: list[Any] = []
        while len(rows) < 3 * len(SHAPES):
            message = consumer.poll(30)
            assert message is not None and message.error() is None, message
            headers = message.headers()
            rows.append([{"key": k, "value": v} for k, v in headers] if headers else None)
        return rows
    finally:
        consumer.close()


@pytest.mark.parametrize("compression", ["none", "lz4"])
def test_headers_read_from_the_record_bytes_equal_librdkafka_and_confluent_kafka(
    reference_broker: KafkaBroker, compression: str
) -> None:
    topic = reference_broker.create_topic(1)
    _produce(reference_broker, topic, compression)
    fast, read_raw = _native_headers(reference_broker, topic, raw=True)
    parsed, parsed_raw = _native_headers(reference_broker, topic, raw=False)
    assert fast == parsed
    # every record with a value went the fast path (null and empty values go through librdkafka)
    assert (read_raw, parsed_raw) == (3 * sum(bool(v) for v, _h in SHAPES), 0)
    assert fast == _confluent_headers(reference_broker, topic)
    expected = [None if h is None else [{"key": k, "value": v} for k, v in h] for _v, h in SHAPES] * 3
    assert fast == expected
