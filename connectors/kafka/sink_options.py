"""The ``kafka-unified`` sink's options and the columns it accepts, checked on the driver.

``KafkaSinkOptions`` is what both producing paths (``python_sink.py``, ``native_sink.py``) read;
``validate_sink_schema`` refuses, before any task runs, columns the sink could not write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.types import BinaryType, IntegerType, StringType, StructType

from connector_base import ConnectorError, InvalidOptionError
from connectors.formats.format_options import is_format_option
from connectors.formats.writer_schemas import WriterSchema
from connectors.kafka.client_config import redact, translate_client_options
from connectors.kafka.java_settings import check_librdkafka, translate_java_settings
from connectors.kafka.reader_choice import KafkaWriter, resolve_writer

__all__ = ["KafkaSinkOptions", "validate_sink_schema"]

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
