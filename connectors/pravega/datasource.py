"""The PySpark adapter of ``format("pravega")``: options in, bridge (and sink) out."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSourceReader, DataSourceStreamWriter, DataSourceWriter
from pyspark.sql.types import BinaryType, LongType, StringType, StructField, StructType
from typing_extensions import override

from connector_base import InvalidOptionError
from connector_base.spark import ReadLimitOptions, SourceDataSource, SplitPlanner, SplitsPartition
from connector_base.spark.bridge import _BridgeBatchReader, to_arrow_schema
from connector_base.spark.event_time_options import EventTimeOptions
from connectors._extras import require_extra
from connectors.formats.format_options import RecordFormatOptions
from connectors.formats.spark_schema import (
    ReaderSchemasInOffsets,
    decoded_schema,
    decoder_for,
    pinned_schema,
)
from connectors.formats.writer_schemas import resolve_writer_schemas
from connectors.pravega.controller_client import CLIENT_MODULES
from connectors.pravega.event_time import (
    CutFrom,
    EventTimeExtractor,
    check_column,
    cut_support,
    parse_cut_from,
    parse_encoding,
)
from connectors.pravega.options import PARSE_MODE_OPTION, PravegaSinkOptions, PravegaSourceOptions, ReadMode
from connectors.pravega.planner import PravegaSegmentPlanner
from connectors.pravega.source import PravegaSource

__all__ = ["PRAVEGA_SCHEMA", "PravegaDataSource"]

EVENT_COLUMN = {"value": "event"}
"""``valueFormat`` decodes the ``event`` column (Pravega events have no key)."""

PRAVEGA_SCHEMA = StructType(
    [
        StructField("event", BinaryType()),
        StructField("scope", StringType()),
        StructField("stream", StringType()),
        StructField("segment_id", LongType()),
        StructField("offset", LongType()),
    ]
)


class PravegaDataSource(ReaderSchemasInOffsets, SourceDataSource):
    """``spark.read`` / ``readStream`` / ``write`` / ``writeStream`` ``.format("pravega")``."""

    fixed_schema = True

    @classmethod
    @override
    def name(cls) -> str:
        return "pravega"

    @override
    def default_schema(self) -> StructType:
        """The event's bytes and position; with ``valueFormat``, the decoded event (registry asked now)."""
        formats = self._formats()
        if not formats.active:
            return PRAVEGA_SCHEMA
        return decoded_schema(to_arrow_schema(PRAVEGA_SCHEMA), formats, self._single_stream(), EVENT_COLUMN)

    @override
    def fixed_schema_for(self, schema: StructType) -> StructType:
        """With ``valueFormat``: the columns of the reader schema ``load()`` pinned in ``schema``."""
        formats = self._formats()
        if formats.active:
            pinned = pinned_schema(to_arrow_schema(PRAVEGA_SCHEMA), formats, schema, EVENT_COLUMN)
            if pinned is not None:
                return pinned
        return super().fixed_schema_for(schema)

    def _formats(self) -> RecordFormatOptions:
        return RecordFormatOptions.parse(dict(self.options), PARSE_MODE_OPTION, roles=("value",))

    def _single_stream(self) -> str | None:
        """The one stream read: subjects of the ``topic`` strategy are ``<stream>-value``."""
        raw = {k.lower(): v for k, v in self.options.items()}.get("stream", "")
        names = [s.strip() for s in str(raw).split(",") if s.strip()]
        return names[0].split("/")[-1] if len(names) == 1 else None

    def _options(self, streaming: bool) -> PravegaSourceOptions:
        require_extra(f"format {self.name()!r}", "pravega", CLIENT_MODULES)
        opts = PravegaSourceOptions.parse(dict(self.options), streaming)
        if opts.mode is ReadMode.READER_GROUP:
            raise InvalidOptionError(
                "mode",
                "reader_group",
                "segments in Spark (reader-group splits cannot replay a micro-batch; they run in the "
                "local runtime only, see docs/pravega.md)",
            )
        return opts

    def reader(self, schema: StructType) -> DataSourceReader:
        """A batch reader; an empty plan (nothing between the stream cuts) reads nothing."""
        self.create_source(schema, streaming=False)
        self.batch_rows()
        return _EmptyPlanSafeBatchReader(self, schema)

    @override
    def create_source(self, schema: StructType, streaming: bool) -> PravegaSource:
        options = self._options(streaming)
        formats = self._formats()
        if not formats.active:
            return PravegaSource(options)
        stream = self._single_stream()
        return PravegaSource(options, lambda: decoder_for(schema, formats, stream, EVENT_COLUMN))

    @override
    def create_planner(self, source: PravegaSource) -> SplitPlanner[object]:  # type: ignore[override,type-var]
        event_time = self.event_time_options()
        from_events = event_time.cut and source.options.cut_from is CutFrom.EVENTS
        extractor = (
            EventTimeExtractor(source.options.event_time_encoding, event_time.column) if from_events else None
        )
        return PravegaSegmentPlanner(source.options, extractor, cut=event_time.cut)  # type: ignore[return-value]

    @override
    def event_time_options(self) -> EventTimeOptions:
        """As the bridge's, and ``eventTime.cutFrom=watermarks`` only with ``eventTime.alignment=cut``."""
        parsed = super().event_time_options()
        if not parsed.cut and parse_cut_from(self.options) is CutFrom.WATERMARKS:
            raise InvalidOptionError(
                "eventTime.cutFrom",
                "watermarks",
                "events (the default) unless eventTime.alignment=cut: the watermarks only choose the cut",
            )
        return parsed

    @override
    def event_time_cut_support(self, options: EventTimeOptions) -> str | None:
        """The cut reads event times from the events on the driver (eventTime.column / eventTime.encoding),
        or takes them from the streams' watermarks (eventTime.cutFrom=watermarks)."""
        if parse_cut_from(self.options) is CutFrom.WATERMARKS:
            if options.column is not None:
                raise InvalidOptionError(
                    "eventTime.column",
                    options.column,
                    "no value with eventTime.cutFrom=watermarks (the times are the writers' noted "
                    "times, read from the stream's watermarks, not from the events)",
                )
            return None
        encoding = parse_encoding(self.options)
        check_column(encoding, options.column)
        return cut_support(encoding, options.column)

    @override
    def read_limit_options(self) -> ReadLimitOptions:
        return self._options(streaming=True).read_limits()

    @override
    def reader_config(self) -> dict[str, object]:
        return {"source.reader.element.queue.capacity": 4}

    # --- sink -------------------------------------------------------------------------------------
    def _sink_options(self, schema: StructType) -> PravegaSinkOptions:
        from connectors.pravega.sink import validate_sink_schema

        require_extra(f"format {self.name()!r}", "pravega", CLIENT_MODULES)
        opts = PravegaSinkOptions.parse(dict(self.options))
        formats = self._formats()
        if formats.active:  # valueFormat: the event column is encoded with the writer schema
            schemas = resolve_writer_schemas(formats, opts.stream)
            opts = dataclasses.replace(opts, writer_schema=schemas.get("value"))
        validate_sink_schema(schema, opts.note_time_column, encoded=opts.writer_schema is not None)
        return opts

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        """A batch writer (``df.write``)."""
        from connectors.pravega.sink import PravegaBatchWriter

        return PravegaBatchWriter(self._sink_options(schema), schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        """A streaming writer (``df.writeStream``)."""
        from connectors.pravega.sink import PravegaStreamWriter

        return PravegaStreamWriter(self._sink_options(schema), schema)


class _EmptyPlanSafeBatchReader(_BridgeBatchReader):
    """The bridge's batch reader; when the plan has no partition Spark still calls ``read`` once
    with a partition of its own, which must yield nothing (the bridge asserts a ``SplitsPartition``)."""

    @override
    def read(self, partition: Any) -> Iterator[Any]:
        if not isinstance(partition, SplitsPartition):
            return iter(())
        return super().read(partition)
