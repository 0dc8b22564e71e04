"""The ``kafka-unified`` sink: ``df.write`` and ``writeStream`` produce rows to Kafka, at least once.

Columns: ``value`` (required, binary or string), ``key``, ``topic``, ``partition``, ``headers``
(``array<struct<key: string, value: binary>>``); the ``topic`` option, when set, overrides the
column (as Spark). Every task waits for the delivery report of each record it produced; the first
failed delivery fails the task with the broker's reason, so Spark retries it (at least once).

Two producing paths, chosen by ``kafka.writer`` (``reader_choice.py``): the compiled one
(``native_sink.py``: Arrow columns into librdkafka, no Python object per record) and the
confluent-kafka one here (``produce_batches``); both wait for deliveries with ``wait_for_deliveries``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import BinaryType, IntegerType, StringType, StructType
from typing_extensions import override

from connector_base import ConnectorError, InvalidOptionError
from connectors.formats.format_options import is_format_option
from connectors.formats.writer_schemas import PayloadEncoder, WriterSchema, writer_encoder
from connectors.kafka.client_config import redact, translate_client_options
from connectors.kafka.client_errors import ConnectErrorWatch
from connectors.kafka.java_settings import check_librdkafka, translate_java_settings
from connectors.kafka.reader_choice import KafkaWriter, resolve_writer

__all__ = [
    "KafkaBatchWriter",
    "KafkaSinkOptions",
    "KafkaStreamWriter",
    "produce_batches",
    "validate_sink_schema",
    "wait_for_deliveries",
]

LOG = logging.getLogger(__name__)

FLUSH_TIMEOUT_S = 120.0
FLUSH_SLICE_S = 1.0
_SINK_OPTIONS = {"topic", "path", "includeheaders", "checkpointlocation"}


@dataclass(frozen=True, slots=True)
class KafkaSinkOptions:
    """Validated sink options; ``client_config`` holds librdkafka settings (may hold secrets)."""

    bootstrap_servers: str
    topic: str | None
    client_config: dict[str, str] = field(repr=False)
    writer_schemas: dict[str, WriterSchema] = field(default_factory=dict)
    """``keyFormat``/``valueFormat``: the schema each encoded column is written with (fixed on the driver)."""
    writer: KafkaWriter = KafkaWriter.PYTHON
    """``kafka.writer``: the compiled or the confluent-kafka producing path (chosen on the driver)."""

    def __repr__(self) -> str:
        config = redact(self.client_config)
        writer = self.writer.value
        return f"KafkaSinkOptions({self.bootstrap_servers!r}, topic={self.topic!r}, {writer}, {config})"

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> KafkaSinkOptions:
        """Validate; raises ``InvalidOptionError`` naming the option."""
        lowered = {
            k.lower(): v for k, v in options.items() if v is not None and not is_format_option(k.lower())
        }
        writer = resolve_writer(lowered.pop("kafka.writer", None))
        opts = translate_java_settings(lowered)
        for name, value in options.items():
            key = name.lower()
            if not key.startswith("kafka.") and key not in _SINK_OPTIONS and not is_format_option(key):
                raise InvalidOptionError(
                    name, value, "a 'kafka.*' client setting, 'topic' or 'includeHeaders'"
                )
        bootstrap = opts.get("kafka.bootstrap.servers", "").strip()
        if not bootstrap:
            raise InvalidOptionError("kafka.bootstrap.servers", None, "a comma-separated list of host:port")
        client = translate_client_options(opts)
        client.pop("bootstrap.servers", None)
        client.pop("default.api.timeout.ms", None)
        topic = opts.get("topic")
        if topic is not None and not topic.strip():
            raise InvalidOptionError("topic", topic, "a topic name")
        parsed = cls(bootstrap, topic.strip() if topic else None, client, writer=writer)
        check_librdkafka(parsed.producer_config(), producer=True)
        return parsed

    def producer_config(self) -> dict[str, Any]:
        """librdkafka producer settings (acks from all replicas by default).

        Keyed records go where the Java client's default partitioner puts them (murmur2), so a key
        lands on the partition Spark's Kafka sink would choose; librdkafka's own default is CRC32.
        """
        conf: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap_servers,
            "acks": "all",
            "linger.ms": 5,
            "partitioner": "murmur2_random",
        }
        conf.update(self.client_config)
        return conf


_KAFKA_COLUMNS = ("topic", "key", "value", "partition", "headers")
_HEADERS_TYPE = "array<struct<key:string,value:binary>>"


def validate_sink_schema(schema: StructType, options: KafkaSinkOptions) -> None:
    """Fail early (on the driver) when the columns cannot be written.

    Names match exactly, as in Spark's ``KafkaWriter``; a column whose name differs from a Kafka
    column only in case (``Key``, ``VALUE``) is refused, because writing would drop it (Spark
    silently writes a null key for ``Key``); types are those ``KafkaWriter`` accepts.
    """
    names = [f.name for f in schema.fields]
    for name in names:
        if name.lower() in _KAFKA_COLUMNS and name != name.lower():
            raise ConnectorError(
                f"column {name!r} is not the Kafka sink's {name.lower()!r} column: names match exactly "
                f"(as in Spark's Kafka sink), so it would not be written; rename it with "
                f"withColumnRenamed({name!r}, {name.lower()!r}) or drop it"
            )
    types = {f.name: f.dataType for f in schema.fields}
    if "value" not in types:
        raise ConnectorError("the Kafka sink needs a 'value' column (binary or string)")
    for name in ("key", "value"):
        if name in options.writer_schemas:
            continue  # encoded with its schema (keyFormat / valueFormat)
        if name in types and not isinstance(types[name], BinaryType | StringType):
            raise ConnectorError(
                f"column '{name}' must be binary or string, not {types[name].simpleString()}"
            )
    if "topic" in types and not isinstance(types["topic"], StringType):
        raise ConnectorError(f"column 'topic' must be a string, not {types['topic'].simpleString()}")
    if "partition" in types and not isinstance(types["partition"], IntegerType):
        raise ConnectorError(f"column 'partition' must be an int, not {types['partition'].simpleString()}")
    if "headers" in types and types["headers"].simpleString() != _HEADERS_TYPE:
        raise ConnectorError(
            f"column 'headers' must be {_HEADERS_TYPE}, not {types['headers'].simpleString()}"
        )
    if options.topic is None and "topic" not in types:
        raise InvalidOptionError("topic", None, "a topic (option 'topic' or a 'topic' column)")


def _column(batch: pa.RecordBatch, name: str) -> list[Any] | None:
    idx = batch.schema.get_field_index(name)
    return None if idx < 0 else batch.column(idx).to_pylist()


def _bytes(values: list[Any] | None, n: int) -> list[Any]:
    if values is None:
        return [None] * n
    return [v.encode() if isinstance(v, str) else v for v in values]


def _encoded(batch: pa.RecordBatch, name: str, encoders: dict[str, PayloadEncoder]) -> list[Any] | None:
    encoder = encoders.get(name)
    idx = batch.schema.get_field_index(name)
    if encoder is None or idx < 0:
        return None
    return encoder.encode(batch.column(idx), name)


class _Delivery:
    """Counts delivery reports and keeps the first failure."""

    def __init__(self) -> None:
        self.delivered = 0
        self.error: str | None = None

    def __call__(self, err: Any, msg: Any) -> None:
        if err is not None:
            if self.error is None:
                self.error = f"{err.str()} (topic {msg.topic()}, partition {msg.partition()})"
        else:
            self.delivered += 1


def wait_for_deliveries(
    flush: Callable[[float], int], failure: Callable[[], str | None], check_client: Callable[[], None]
) -> None:
    """Flush until every produced record is acknowledged (at least once); raise on a failed delivery.

    ``flush(seconds)`` returns what is still outstanding, ``failure()`` the first failed delivery,
    ``check_client()`` raises on an unrecoverable client error. The flush runs in slices, so a
    wrong password or an untrusted certificate ends the wait at once.
    """
    deadline = time.monotonic() + FLUSH_TIMEOUT_S
    remaining = flush(FLUSH_SLICE_S)
    while remaining and failure() is None and time.monotonic() < deadline:
        check_client()
        remaining = flush(FLUSH_SLICE_S)
    error = failure()
    if error is not None:
        raise ConnectorError(f"Kafka delivery failed: {error}")
    if remaining:
        raise ConnectorError(f"{remaining} records were not delivered within {FLUSH_TIMEOUT_S}s")


def produce_batches(options: KafkaSinkOptions, batches: Iterator[pa.RecordBatch]) -> int:
    """Produce every row, wait for all delivery reports; raise with the broker's reason on failure."""
    from confluent_kafka import KafkaException, Producer

    connect_errors = ConnectErrorWatch("producing to Kafka")
    producer = Producer({**options.producer_config(), "error_cb": connect_errors})
    report = _Delivery()
    sent = 0
    produce = producer.produce
    encoders = {r: writer_encoder(w) for r, w in options.writer_schemas.items()}
    for batch in batches:
        n = batch.num_rows
        if n == 0:
            continue
        values = _encoded(batch, "value", encoders) or _bytes(_column(batch, "value"), n)
        keys = _encoded(batch, "key", encoders) or _bytes(_column(batch, "key"), n)
        topics = [options.topic] * n if options.topic else _column(batch, "topic")
        partitions = _column(batch, "partition")
        headers = _column(batch, "headers")
        for i in range(n):
            topic = topics[i] if topics is not None else None
            if not topic:
                raise ConnectorError(f"row {sent} has a null topic and the 'topic' option is not set")
            kwargs: dict[str, Any] = {"value": values[i], "key": keys[i], "on_delivery": report}
            if partitions is not None and partitions[i] is not None:
                kwargs["partition"] = partitions[i]
            if headers is not None and headers[i]:
                kwargs["headers"] = [(h["key"], h["value"]) for h in headers[i]]
            while True:
                try:
                    produce(topic, **kwargs)
                    break
                except BufferError:
                    producer.poll(0.1)
                    connect_errors.raise_if_failed()
                except KafkaException as e:
                    raise ConnectorError(f"producing to topic {topic} failed: {e}") from e
            if report.error is not None:
                break
            sent += 1
            if sent % 10_000 == 0:
                producer.poll(0)
        if report.error is not None:
            break
    wait_for_deliveries(producer.flush, lambda: report.error, connect_errors.raise_if_failed)
    return sent


def _produce(options: KafkaSinkOptions, batches: Iterator[pa.RecordBatch]) -> int:
    """Every row through ``kafka.writer``'s producing path; the number of records delivered."""
    if options.writer is KafkaWriter.NATIVE:
        from connectors.kafka.native_sink import produce_batches_native

        return produce_batches_native(options, batches)
    return produce_batches(options, batches)


@dataclass
class KafkaCommitMessage(WriterCommitMessage):
    """What a task wrote."""

    records: int


class KafkaBatchWriter(DataSourceArrowWriter):
    """``df.write.format("kafka-unified")``."""

    def __init__(self, options: KafkaSinkOptions) -> None:
        self._options = options

    @override
    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:
        return KafkaCommitMessage(_produce(self._options, iterator))

    @override
    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        LOG.info(
            "wrote %d records to Kafka", sum(m.records for m in messages if isinstance(m, KafkaCommitMessage))
        )


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    """``writeStream.format("kafka-unified")`` (at least once: a re-run micro-batch produces again)."""

    def __init__(self, options: KafkaSinkOptions) -> None:
        self._options = options

    @override
    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:
        return KafkaCommitMessage(_produce(self._options, iterator))

    @override
    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        LOG.info(
            "batch %d: wrote %d records",
            batchId,
            sum(m.records for m in messages if isinstance(m, KafkaCommitMessage)),
        )

    @override
    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        LOG.warning("batch %d aborted; records already delivered stay in Kafka (at-least-once)", batchId)
