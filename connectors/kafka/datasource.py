"""The PySpark adapter of ``kafka-unified``: options in, bridge (and sink) out."""

from __future__ import annotations

import dataclasses

from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)
from typing_extensions import override

from connector_base import ConnectorError
from connector_base.spark import ReadLimitOptions, SourceDataSource, SplitPlanner
from connector_base.spark.event_time_options import EventTimeOptions
from connector_base.spark.filters import ColumnFilter, FilterSupport
from connectors._extras import require_extra
from connectors.formats.format_options import RecordFormatOptions
from connectors.formats.spark_schema import (
    ReaderSchemasInOffsets,
    decoded_schema,
    decoder_for,
    pinned_schema,
)
from connectors.formats.writer_schemas import resolve_writer_schemas
from connectors.kafka.event_time import KAFKA_EVENT_TIME_COLUMN
from connectors.kafka.filter_pushdown import kafka_filter_support
from connectors.kafka.options import KafkaSourceOptions, SubscriptionKind, parse_subscription
from connectors.kafka.planner import KafkaSplitPlanner
from connectors.kafka.record_emitter import arrow_schema
from connectors.kafka.sink import KafkaBatchWriter, KafkaSinkOptions, KafkaStreamWriter, validate_sink_schema
from connectors.kafka.source import KafkaSource

__all__ = ["HEADERS", "KafkaDataSource", "kafka_schema"]

HEADERS = ArrayType(StructType([StructField("key", StringType()), StructField("value", BinaryType())]))

CLIENT_MODULES = ("confluent_kafka",)
"""The ``kafka`` extra's client library, imported only when a reader or writer is built."""


def kafka_schema(include_headers: bool) -> StructType:
    """The columns of Spark's Kafka source."""
    fields = [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
    ]
    if include_headers:
        fields.append(StructField("headers", HEADERS))
    return StructType(fields)


class KafkaDataSource(ReaderSchemasInOffsets, SourceDataSource):
    """``spark.read`` / ``readStream`` / ``write`` / ``writeStream`` ``.format("kafka-unified")``."""

    fixed_schema = True
    supports_filter_pushdown = True
    reads_min_partitions = True  # Spark's meaning: offset ranges are cut into at least this many tasks

    @classmethod
    @override
    def name(cls) -> str:
        return "kafka-unified"

    @override
    def default_schema(self) -> StructType:
        """Spark's Kafka columns; with ``keyFormat``/``valueFormat`` the decoded ones (registry asked now)."""
        raw = {k.lower(): v for k, v in self.options.items()}.get("includeheaders", "false")
        headers = str(raw).strip().lower() == "true"
        formats = self._formats()
        if not formats.active:
            return kafka_schema(headers)
        return decoded_schema(arrow_schema(headers), formats, self._single_topic())

    @override
    def fixed_schema_for(self, schema: StructType) -> StructType:
        """With formats: the columns of the reader schemas ``load()`` pinned in ``schema``."""
        formats = self._formats()
        if formats.active:
            raw = {k.lower(): v for k, v in self.options.items()}.get("includeheaders", "false")
            pinned = pinned_schema(arrow_schema(str(raw).strip().lower() == "true"), formats, schema)
            if pinned is not None:
                return pinned
        return super().fixed_schema_for(schema)

    def _formats(self) -> RecordFormatOptions:
        return RecordFormatOptions.parse(dict(self.options))

    def _single_topic(self) -> str | None:
        """The one topic read (``subscribe`` or ``assign`` of one topic), for ``<topic>-value`` subjects."""
        try:
            sub = parse_subscription({k.lower(): v for k, v in self.options.items()})
        except ConnectorError:
            return None
        if sub.kind is SubscriptionKind.SUBSCRIBE and len(sub.topics) == 1:
            return sub.topics[0]
        if sub.kind is SubscriptionKind.ASSIGN and len({t for t, _p in sub.partitions}) == 1:
            return sub.partitions[0][0]
        return None

    def _options(self, streaming: bool) -> KafkaSourceOptions:
        require_extra(f"format {self.name()!r}", "kafka", CLIENT_MODULES)
        return KafkaSourceOptions.parse(dict(self.options), streaming)

    @override
    def create_source(self, schema: StructType, streaming: bool) -> KafkaSource:
        options = self._options(streaming)
        formats = self._formats()
        if not formats.active:
            return KafkaSource(options)
        topic = self._single_topic()
        return KafkaSource(options, lambda: decoder_for(schema, formats, topic))

    @override
    def create_planner(self, source: KafkaSource) -> SplitPlanner[object]:  # type: ignore[override]
        return KafkaSplitPlanner(  # type: ignore[return-value]
            source.options, source.outage, source.driver_client
        )

    @override
    def filter_support(self, column_filter: ColumnFilter) -> FilterSupport:
        return kafka_filter_support(column_filter)

    @override
    def event_time_cut_support(self, options: EventTimeOptions) -> str | None:
        if options.column is not None and options.column.lower() != KAFKA_EVENT_TIME_COLUMN:
            return (
                f"off, or eventTime.column={KAFKA_EVENT_TIME_COLUMN} (or unset): the driver sees only the "
                f"record timestamp of Kafka records, not column {options.column!r}"
            )
        return None

    @override
    def read_limit_options(self) -> ReadLimitOptions:
        return self._options(streaming=True).read_limits()

    @override
    def reader_config(self) -> dict[str, object]:
        return {"source.reader.element.queue.capacity": 4}

    # --- sink -------------------------------------------------------------------------------------
    def _sink_options(self, schema: StructType) -> KafkaSinkOptions:
        require_extra(f"format {self.name()!r}", "kafka", CLIENT_MODULES)
        opts = KafkaSinkOptions.parse(dict(self.options))
        formats = self._formats()
        if formats.active:
            opts = dataclasses.replace(opts, writer_schemas=resolve_writer_schemas(formats, opts.topic))
        validate_sink_schema(schema, opts)
        return opts

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        """A batch writer (``df.write``); ``mode("overwrite")`` is refused, as by Spark's Kafka sink."""
        if overwrite:
            raise ConnectorError(
                "save mode Overwrite is not allowed for Kafka (a topic cannot be truncated); use "
                'mode("append"), as with Spark\'s kafka format'
            )
        return KafkaBatchWriter(self._sink_options(schema))

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        """A streaming writer (``df.writeStream``)."""
        return KafkaStreamWriter(self._sink_options(schema))
