"""The PySpark adapter of ``files-unified``: options in, bridge out."""

from __future__ import annotations

from pyspark.sql.types import StringType, StructType
from typing_extensions import override

from connector_base import ConnectorError, InvalidOptionError
from connector_base.spark import ReadLimitOptions, SourceDataSource, SplitPlanner, to_arrow_schema
from connector_base.spark.event_time_options import EventTimeOptions
from connector_base.spark.filters import ColumnFilter, FilterSupport
from connector_base.spark.parallelism import planning_parallelism
from connectors.files.filter_pushdown import files_filter_support
from connectors.files.formats import ReadSchema
from connectors.files.listing import check_glob_matches, check_path
from connectors.files.options import FILE_COLUMN, OFFSET_COLUMN, FileFormat, FileSourceOptions
from connectors.files.partitions import partition_names
from connectors.files.schema_inference import infer_schema
from connectors.files.source import FilePlanner, FileSource


def _check_schema(schema: StructType, options: FileSourceOptions, partitions: tuple[str, ...] = ()) -> None:
    names = schema.fieldNames()
    meta = {FILE_COLUMN, OFFSET_COLUMN} if options.include_metadata else set()
    if options.include_metadata and not meta & set(names):
        raise InvalidOptionError(
            "includeMetadata",
            "true",
            f"a schema with a '{FILE_COLUMN} string' and/or '{OFFSET_COLUMN} long' field",
        )
    if options.format is FileFormat.TEXT:
        data = [f for f in schema.fields if f.name not in meta and f.name not in partitions]
        if len(data) != 1 or not isinstance(data[0].dataType, StringType):
            raise InvalidOptionError(
                "format", "text", f"a schema with one string column (the line), got {schema.simpleString()}"
            )


class FilesDataSource(SourceDataSource):
    """``spark.read.format("files-unified")`` / ``spark.readStream.format("files-unified")``.

    Options are validated when Spark builds the instance, at ``load()``, with or without a user
    schema; checks that need the schema run when the reader is created (batch planning, or the
    first step of a streaming query).
    """

    supports_filter_pushdown = True

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        self.event_time_options()  # the bridge's eventTime.* options leave before files' own are checked
        planning_parallelism(self)  # so does minPartitions (the bridge packs files with it)
        options = self._options()
        check_path(options.path)
        if not options.continuous:
            check_glob_matches(options.path, options.lists_recursively)

    @classmethod
    @override
    def name(cls) -> str:
        return "files-unified"

    def _options(self) -> FileSourceOptions:
        return FileSourceOptions.parse(self.options)

    @override
    def default_schema(self) -> StructType:
        options = self._options()
        check_path(options.path)
        return infer_schema(options)

    @override
    def create_source(self, schema: StructType, streaming: bool) -> FileSource:
        options = self._options()
        check_path(options.path)
        if streaming and options.modified.active:
            key, value = (
                ("modifiedBefore", options.modified.before)
                if options.modified.before is not None
                else ("modifiedAfter", options.modified.after)
            )
            raise InvalidOptionError(
                key, value, "unset for a streaming read (Spark's file stream source refuses it too)"
            )
        partitions = partition_names(options.path) if options.discovers_partitions else ()
        _check_schema(schema, options, partitions)
        read_schema = ReadSchema.of(to_arrow_schema(schema), options, partitions)
        if read_schema.corrupt and not read_schema.data.names and options.format is not FileFormat.TEXT:
            # Spark's UNSUPPORTED_FEATURE.QUERY_ONLY_CORRUPT_RECORD_COLUMN, for the same reason
            raise ConnectorError(
                f"the schema's only data column is the corrupt-record column {read_schema.corrupt!r} (an "
                f"inferred schema is so when every record of the files is malformed): such a read is "
                f"refused, as by Spark's json and csv sources; give a schema with the columns "
                f"the records hold, or read the files with format text"
            )
        return FileSource(options, read_schema)

    @override
    def create_planner(self, source: FileSource) -> SplitPlanner[object]:  # type: ignore[override]
        event_time = self.event_time_options()
        column = event_time.column if event_time.cut else None
        return FilePlanner(source.options, source.schema, column)  # type: ignore[return-value]

    @override
    def filter_support(self, column_filter: ColumnFilter) -> FilterSupport:
        return files_filter_support(column_filter)

    @override
    def event_time_cut_support(self, options: EventTimeOptions) -> str | None:
        fmt = {k.lower(): v for k, v in self.options.items()}.get("format", "")
        if str(fmt).strip() and str(fmt).strip().lower() != FileFormat.PARQUET.value:
            return (
                "off for format "
                f"{fmt!r}: the cut reads event times from Parquet row-group statistics (format=parquet)"
            )
        if options.column is None:
            return "off, or set eventTime.column to the files' event-time column (timestamp or epoch-ms long)"
        return None

    @override
    def read_limit_options(self) -> ReadLimitOptions:
        return self._options().read_limits()
