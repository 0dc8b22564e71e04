"""Both readers (``kafka.reader=native`` and ``python``) give identical Arrow tables for the same ranges.

The rest of the Kafka integration tests run on either reader (``SPARKFLOW_KAFKA_READER``; ``make test``
runs them on both); these compare the two directly on the shapes where a compiled reader could go
wrong: headers (order, duplicates, null values, none at all), null keys and values, every compression
codec, timestamps of both types, ranges that start and stop mid-batch, and transactions under both
isolation levels.
"""

from __future__ import annotations

import sys
import time
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pytest

from connector_base.spark.partition_reader import read_splits_as_arrow
from connectors.kafka import consumer_pool
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.reader_choice import NATIVE_MODULE, KafkaReader
from connectors.kafka.record_emitter import arrow_schema
from connectors.kafka.source import KafkaSource
from connectors.kafka.split import KafkaPartitionSplit
from integration_tests.connectors.kafka.conftest import require
from integration_tests.connectors.kafka.helpers import produce_transactions
from sparkflow_testing.kafka.broker import Gap, KafkaBroker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def _read(
    broker: KafkaBroker, reader: str, splits: list[KafkaPartitionSplit], headers: bool = True, **options: str
) -> pa.Table:
    opts = KafkaSourceOptions.parse(
        {
            "kafka.bootstrap.servers": broker.bootstrap,
            "subscribe": "x",
            "includeHeaders": str(headers).lower(),
            "kafka.reader": reader,
            **options,
        },
        True,
    )
    assert opts.reader is KafkaReader(reader)
    batches = list(read_splits_as_arrow(KafkaSource(opts), splits, arrow_schema(headers), batch_rows=700))
    table = pa.Table.from_batches(batches, arrow_schema(headers))
    return table.sort_by([("topic", "ascending"), ("partition", "ascending"), ("offset", "ascending")])


def _assert_same(python: pa.Table, native: pa.Table) -> None:
    assert native.schema.equals(python.schema)
    assert native.num_rows == python.num_rows
    for name in python.column_names:  # column by column, to name the first that differs
        assert native.column(name).equals(python.column(name)), name


def _headers(i: int) -> list[tuple[str, bytes | None]] | None:
    if i % 5 == 0:
        return None  # no headers
    out: list[tuple[str, bytes | None]] = [("trace", f"t{i}".encode()), ("dup", b"1"), ("dup", b"2")]
    if i % 3 == 0:
        out.append(("nullvalue", None))
    if i % 7 == 0:
        out.append(("utf8-ключ", "значение".encode()))
    return out


def test_every_codec_headers_null_keys_and_cut_ranges_read_identically(kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(2)
    n = 600
    for codec in CODECS:
        kafka_cluster.produce(
            topic,
            [None if i % 50 == 0 else (codec * 20 + str(i)).encode() for i in range(n)],  # type: ignore[misc]
            keys=[None if i % 4 == 0 else f"k{i}".encode() for i in range(n)],
            headers=[_headers(i) for i in range(n)],
            timestamps=[1_700_000_000_000 + i for i in range(n)],
            **{"compression.type": codec, "linger.ms": 20},
        )
    ends = kafka_cluster.end_offsets(topic)
    splits = [KafkaPartitionSplit(topic, 0, 13, ends[0] - 17), KafkaPartitionSplit(topic, 1, 0, ends[1])]
    for headers in (True, False):
        python = _read(kafka_cluster, "python", splits, headers, consumeBatchSize="257")
        native = _read(kafka_cluster, "native", splits, headers, consumeBatchSize="257")
        assert python.num_rows == (ends[0] - 17 - 13) + ends[1]
        _assert_same(python, native)
    assert native.column("key").null_count > 0 and native.column("value").null_count > 0


def test_log_append_time_topic_reads_identically(kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(1, **{"message.timestamp.type": "LogAppendTime"})
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(300)], partition=0)
    splits = [KafkaPartitionSplit(topic, 0, 0, 300)]
    python, native = (_read(kafka_cluster, r, splits) for r in ("python", "native"))
    _assert_same(python, native)
    require(kafka_cluster, Gap.LOG_APPEND_TIME)
    assert set(native.column("timestampType").to_pylist()) == {1}


@pytest.mark.parametrize("isolation", ["read_committed", "read_uncommitted"])
def test_transactions_read_identically(kafka_cluster: KafkaBroker, isolation: str) -> None:
    topic = kafka_cluster.create_topic(1)
    committed, every = produce_transactions(kafka_cluster, topic)
    end = kafka_cluster.end_offsets(topic)[0]
    splits = [KafkaPartitionSplit(topic, 0, 0, end)]
    tables = [
        _read(kafka_cluster, r, splits, **{"kafka.isolation.level": isolation}) for r in ("python", "native")
    ]
    _assert_same(*tables)
    values = tables[1].column("value").to_pylist()
    if isolation == "read_uncommitted":
        assert values == every
    elif (
        kafka_cluster.gap_reason(Gap.ABORTED_VISIBLE, Gap.ABORTED_TXN_AFTER_MARKER) is None
    ):  # the stand-ins' transaction gaps show on both readers alike
        assert values == committed


def test_native_consumers_are_pooled_apart_and_reused(kafka_cluster: KafkaBroker) -> None:
    topic = kafka_cluster.create_topic(1)
    kafka_cluster.produce(topic, [b"x"] * 50, partition=0)
    splits = [KafkaPartitionSplit(topic, 0, 0, 50)]
    _read(kafka_cluster, "native", splits)
    created, _ = consumer_pool.pool_size()
    for _ in range(3):
        assert _read(kafka_cluster, "native", splits).num_rows == 50
    assert consumer_pool.pool_size()[0] == created  # each task found the pooled native consumer


def test_auto_reads_through_python_where_the_module_is_missing(
    kafka_cluster: KafkaBroker, monkeypatch: Any
) -> None:
    topic = kafka_cluster.create_topic(1)
    kafka_cluster.produce(topic, [f"v{i}".encode() for i in range(40)], partition=0)
    monkeypatch.setitem(sys.modules, NATIVE_MODULE, None)  # import fails, as on a machine without the wheel
    monkeypatch.delenv("SPARKFLOW_KAFKA_READER", raising=False)
    opts = KafkaSourceOptions.parse(
        {"kafka.bootstrap.servers": kafka_cluster.bootstrap, "subscribe": topic}, False
    )
    assert opts.reader is KafkaReader.PYTHON
    rows = [
        r
        for b in read_splits_as_arrow(
            KafkaSource(opts), [KafkaPartitionSplit(topic, 0, 0, 40)], arrow_schema(False)
        )
        for r in b.to_pylist()
    ]
    assert [r["value"] for r in rows] == [f"v{i}".encode() for i in range(40)]


def test_a_partitions_run_is_cut_into_batches_by_bytes(kafka_cluster: KafkaBroker) -> None:
    """The compiled consumer cuts a partition's run where its keys and values pass ``max_bytes``
    (64 MiB when reading: a binary column holds at most 2 GiB); a larger record is a batch of its own."""
    from connectors.kafka.native_split_reader import _NativeConsumer

    topic = kafka_cluster.create_topic(1)
    values = [bytes([65 + i % 26]) * (10_000 if i == 30 else 1_000) for i in range(40)]
    kafka_cluster.produce(topic, values, partition=0)
    opts = KafkaSourceOptions.parse(
        {"kafka.bootstrap.servers": kafka_cluster.bootstrap, "subscribe": topic}, True
    )
    consumer = _NativeConsumer(opts.consumer_config())
    batches: list[pa.RecordBatch] = []
    try:
        consumer.incremental_assign([SimpleNamespace(topic=topic, partition=0, offset=0)])
        deadline = time.monotonic() + 60
        while sum(b.num_rows for b in batches) < len(values) and time.monotonic() < deadline:
            left = len(values) - sum(b.num_rows for b in batches)
            events = consumer.native.consume(left, 1000, False, 4_500)
            batches += [e[5] for e in events if e[0] == "records"]
    finally:
        consumer.close()
    read = [v for b in batches for v in b.column("value").to_pylist()]
    assert read == values
    assert [o for b in batches for o in b.column("offset").to_pylist()] == list(range(len(values)))
    for b in batches:
        size = sum(len(v) for v in b.column("value").to_pylist())
        assert size <= 4_500 or b.num_rows == 1, f"a batch of {b.num_rows} records holds {size} bytes"
    assert [b.num_rows for b in batches if 30 in b.column("offset").to_pylist()] == [1]
    assert max(b.num_rows for b in batches) == 4  # runs were cut by bytes, not only at fetch ends


@pytest.mark.parametrize("codec", ["none", "lz4"])
def test_pieces_of_a_range_size_their_fetches_and_read_each_record_once(
    kafka_cluster: KafkaBroker, codec: str
) -> None:
    """A range cut into pieces: the first piece's fetch brings records past its stop, the compiled
    reader counts them, and the later pieces fetch less (``fetch_sizing``), each record once."""
    from connectors.kafka import fetch_sizing

    require(kafka_cluster, Gap.SMALL_FETCHES)  # the first fetch must bring more than a piece
    topic = kafka_cluster.create_topic(1)
    values = [b"%06d-" % i + b"sensor=7 status=ok reading=0042.17 unit=celsius " * 3 for i in range(1_500)]
    kafka_cluster.produce(topic, values, partition=0, **{"compression.type": codec})
    fetch_sizing.forget()
    at_end = _read(kafka_cluster, "native", [KafkaPartitionSplit(topic, 0, 1_400, 1_500)])
    assert at_end.num_rows == 100
    assert fetch_sizing.records_per_byte(topic) is None  # nothing past the range: nothing learned

    piece = 100
    offsets: list[int] = []
    for start in range(0, 1_000, piece):
        table = _read(kafka_cluster, "native", [KafkaPartitionSplit(topic, 0, start, start + piece)])
        offsets += table.column("offset").to_pylist()
        assert table.column("value").to_pylist() == values[start : start + piece]
        if start == 0:  # the first fetch (8 MiB) brought the whole log: counted
            learned = fetch_sizing.records_per_byte(topic)
            assert learned is not None and learned * fetch_sizing.MAX_FETCH_BYTES >= 1_400
    assert offsets == list(range(1_000))
    settings = fetch_sizing.fetch_settings([(topic, piece)])
    assert settings["max.partition.fetch.bytes"] < fetch_sizing.MAX_FETCH_BYTES
    assert settings["queued.min.messages"] == 1_024
    # the Python reader reads the same pieces through a consumer of the learned size alike
    for start in (300, 900):
        split = [KafkaPartitionSplit(topic, 0, start, start + piece)]
        _assert_same(_read(kafka_cluster, "python", split), _read(kafka_cluster, "native", split))


@pytest.mark.parametrize(
    ("codec", "compressed_by"),
    [("lz4", "producer"), ("lz4", "broker"), ("zstd", "broker"), ("gzip", "producer"), ("gzip", "broker")],
)
def test_compressed_batches_decompress_once_and_read_identically(
    kafka_cluster: KafkaBroker, codec: str, compressed_by: str
) -> None:
    """LZ4 frames from librdkafka's producer, and LZ4 or zstd frames the broker's Java compression
    writes, declare no content size: the compiled reader hands librdkafka a bound from the frame's
    block headers (``src/decompress_hints.rs``). gzip batches, from either, are inflated once
    (``src/gzip_inflate.rs``). Either way it reads what the Python reader reads."""
    import importlib

    require(kafka_cluster, Gap.HIGH_WATERMARK_BATCHED)  # batches of many records, several blocks each
    if compressed_by == "broker":
        require(kafka_cluster, Gap.TOPIC_COMPRESSION)
    native_module = importlib.import_module(NATIVE_MODULE)

    def decompressed_once() -> int:
        if codec == "gzip":
            return int(native_module.gzip_one_pass_count())
        return int(native_module.decompress_hint_counts()[{"lz4": 0, "zstd": 1}[codec]])

    topic_config = {"compression.type": codec} if compressed_by == "broker" else {}
    topic = kafka_cluster.create_topic(2, **topic_config)
    # ~20x compressible, several 64 KiB blocks per batch: librdkafka's guess (4x, 2x) falls short
    line = b"level=INFO service=checkout region=eu-west-1 latency_ms=12 "
    values = [b"%08d " % i + line * 4 for i in range(6_000)]
    producer_codec = codec if compressed_by == "producer" else "none"
    for partition in (0, 1):
        kafka_cluster.produce(
            topic,
            values,
            partition=partition,
            headers=[_headers(i) for i in range(len(values))],
            **{"compression.type": producer_codec, "linger.ms": 50, "batch.size": 1_000_000},
        )
    splits = [KafkaPartitionSplit(topic, 0, 0, 6_000), KafkaPartitionSplit(topic, 1, 1_234, 5_678)]
    before = decompressed_once()
    native = _read(kafka_cluster, "native", splits)
    counted = decompressed_once() - before
    python = _read(kafka_cluster, "python", splits)
    assert native.num_rows == 6_000 + 5_678 - 1_234
    _assert_same(python, native)
    assert native.column("value").to_pylist()[:6_000] == values
    assert counted > 0
