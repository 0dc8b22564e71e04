"""The PySpark adapter of ``kinesis-unified``: options in, bridge out (plus the sink)."""

from __future__ import annotations

from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter
from pyspark.sql.types import BinaryType, LongType, StringType, StructField, StructType, TimestampType
from typing_extensions import override

from connector_base.spark import ReadLimitOptions, SourceDataSource, SplitPlanner
from connector_base.spark.event_time_options import EventTimeOptions
from connector_base.spark.filters import ColumnFilter, FilterSupport
from connectors._extras import require_extra
from connectors.kinesis.filter_pushdown import kinesis_filter_support
from connectors.kinesis.options import KinesisOptions
from connectors.kinesis.planner import KinesisSplitPlanner
from connectors.kinesis.sink import KinesisBatchWriter, KinesisStreamWriter, validate_sink_schema
from connectors.kinesis.source import KinesisSource

__all__ = ["KinesisDataSource", "schema_for"]

KINESIS_EVENT_TIME_COLUMN = "approximateArrivalTimestamp"
"""The only event time the driver can look up by position (AT_TIMESTAMP iterators)."""
CLIENT_MODULES = ("botocore",)
"""The ``kinesis`` extra's client library, imported only when a reader or writer is built."""


def schema_for(deaggregate: bool) -> StructType:
    """The output schema (``subSequenceNumber`` only with ``deaggregate=true``)."""
    fields = [
        StructField("data", BinaryType()),
        StructField("streamName", StringType()),
        StructField("shardId", StringType()),
        StructField("sequenceNumber", StringType()),
        StructField("partitionKey", StringType()),
        StructField("approximateArrivalTimestamp", TimestampType()),
    ]
    if deaggregate:
        fields.append(StructField("subSequenceNumber", LongType()))
    return StructType(fields)


class KinesisDataSource(SourceDataSource):
    """``spark.read.format("kinesis-unified")``, ``readStream``, ``write`` and ``writeStream``."""

    fixed_schema = True
    supports_filter_pushdown = True

    @classmethod
    @override
    def name(cls) -> str:
        return "kinesis-unified"

    def _options(self) -> KinesisOptions:
        require_extra(f"format {self.name()!r}", "kinesis", CLIENT_MODULES)
        return KinesisOptions.parse(self.options)

    @override
    def default_schema(self) -> StructType:
        return schema_for(self._options().deaggregate)

    @override
    def create_source(self, schema: StructType, streaming: bool) -> KinesisSource:
        return KinesisSource(self._options(), bounded=not streaming)

    @override
    def create_planner(self, source: KinesisSource) -> SplitPlanner[object]:  # type: ignore[override]
        return KinesisSplitPlanner(source.options, streaming=not source.bounded)  # type: ignore[return-value]

    @override
    def filter_support(self, column_filter: ColumnFilter) -> FilterSupport:
        return kinesis_filter_support(column_filter)

    @override
    def event_time_cut_support(self, options: EventTimeOptions) -> str | None:
        if options.column is not None and options.column.lower() != KINESIS_EVENT_TIME_COLUMN.lower():
            return (
                f"off, or eventTime.column={KINESIS_EVENT_TIME_COLUMN} (or unset): the driver looks up "
                f"records by arrival time only, not by column {options.column!r}"
            )
        return None

    @override
    def read_limit_options(self) -> ReadLimitOptions:
        opts = self._options()
        return ReadLimitOptions(
            max_records=opts.max_records_per_trigger, max_bytes=opts.max_bytes_per_trigger
        )

    @override
    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        opts = self._options()
        return KinesisBatchWriter(opts, validate_sink_schema(schema, opts))

    @override
    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        opts = self._options()
        return KinesisStreamWriter(opts, validate_sink_schema(schema, opts))
