"""The PySpark adapter of ``format("hybrid")``: child formats read one after the other."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructType
from typing_extensions import override

from connector_base import Boundedness, InvalidOptionError, Source
from connector_base.hybrid import (
    HybridSource,
    HybridSplitPlanner,
    HybridStage,
    SwitchStartKind,
    conformance_problems,
)
from connector_base.spark import ReadLimitOptions, SourceDataSource, SplitPlanner, to_arrow_schema
from connectors.hybrid.options import EVENT_TIME_COLUMN, SOURCES, HybridOptions, data_source_class

__all__ = ["HybridDataSource"]


class DataSourceStage(HybridStage):
    """A stage backed by a registered connector's ``SourceDataSource`` and its prefixed options."""

    def __init__(
        self,
        options: HybridOptions,
        index: int,
        schema: StructType,
        streaming: bool,
    ) -> None:
        self._options = options
        self._index = index
        self._cls = data_source_class(options.formats[index])
        self._schema = schema
        self._streaming = streaming

    def data_source(self, starting_timestamp_ms: int | None = None) -> SourceDataSource:
        """The child data source (with the options that start it at a timestamp, when given)."""
        opts = dict(self._options.child_options[self._index])
        if starting_timestamp_ms is not None:
            opts.update(self._options.timestamp_options(self._index, starting_timestamp_ms))
        ds: SourceDataSource = self._cls(opts)
        return ds

    @property
    @override
    def name(self) -> str:
        return self._options.formats[self._index]

    @property
    @override
    def read_schema(self) -> pa.Schema:
        return to_arrow_schema(self._schema)

    @override
    def source(self, starting_timestamp_ms: int | None = None) -> Source[Any, Any, Any]:
        return self.data_source(starting_timestamp_ms).create_source(self._schema, self._streaming)

    @override
    def planner(self, source: Source[Any, Any, Any]) -> SplitPlanner[Any]:
        return self.data_source().create_planner(source)


class HybridDataSource(SourceDataSource):
    """``spark.read`` / ``readStream`` ``.format("hybrid")``: e.g. history from files, then Kafka.

    The schema is the last source's. Rows of the earlier sources are matched to it by column name
    and cast with Arrow's cast; columns they lack are null; a column the last source does not have
    is refused at ``load()``, as is a type that cannot be cast.
    """

    @classmethod
    def name(cls) -> str:
        """``hybrid``."""
        return "hybrid"

    def _options(self) -> HybridOptions:
        parsed: HybridOptions | None = self.__dict__.get("_parsed")
        if parsed is None:
            parsed = HybridOptions.parse(dict(self.options))
            self.__dict__["_parsed"] = parsed
        return parsed

    def _child(self, index: int) -> SourceDataSource:
        opts = self._options()
        ds: SourceDataSource = data_source_class(opts.formats[index])(dict(opts.child_options[index]))
        return ds

    def _child_schema(self, index: int) -> StructType:
        cache: dict[int, StructType] = self.__dict__.setdefault("_child_schemas", {})
        if index not in cache:
            schema = self._child(index).default_schema()
            if not isinstance(schema, StructType):
                raise TypeError(f"default_schema() of {self._options().formats[index]} is not a StructType")
            cache[index] = schema
        return cache[index]

    @override
    def default_schema(self) -> StructType:
        return self._child_schema(len(self._options().formats) - 1)

    @override
    def create_source(self, schema: StructType, streaming: bool) -> HybridSource:
        opts = self._options()
        last = len(opts.formats) - 1
        target = to_arrow_schema(schema)
        self._child(last)._check_schema(schema)
        stages = []
        for i, fmt in enumerate(opts.formats):
            stage = DataSourceStage(opts, i, schema if i == last else self._child_schema(i), streaming)
            child = stage.source()
            if i < last:
                if child.boundedness is not Boundedness.BOUNDED:
                    raise InvalidOptionError(
                        SOURCES,
                        ",".join(opts.formats),
                        f"every source but the last bounded: {fmt} is unbounded with its options "
                        f"(files-unified: without {fmt}.continuous=true)",
                    )
                self._check_conforms(fmt, stage.read_schema, target)
            stages.append(stage)
        return HybridSource(stages, target, opts.switch_start, streaming)

    def _check_conforms(self, fmt: str, read_schema: pa.Schema, target: pa.Schema) -> None:
        opts = self._options()
        problems = conformance_problems(read_schema, target)
        if problems:
            raise InvalidOptionError(
                SOURCES,
                ",".join(opts.formats),
                f"sources whose columns fit the last source's schema ({', '.join(target.names)}): "
                f"{fmt}: {'; '.join(problems)} (columns are matched by name and cast; missing ones are null)",
            )
        column = opts.switch_start.event_time_column
        if opts.switch_start.kind is SwitchStartKind.DERIVED and column is not None:
            i = target.get_field_index(column)
            if i < 0 or not (
                pa.types.is_timestamp(target.field(i).type) or pa.types.is_integer(target.field(i).type)
            ):
                raise InvalidOptionError(
                    EVENT_TIME_COLUMN,
                    column,
                    f"a timestamp or integer (milliseconds) column of the schema ({', '.join(target.names)})",
                )
            if read_schema.get_field_index(column) < 0:
                raise InvalidOptionError(
                    EVENT_TIME_COLUMN, column, f"a column that {fmt} has ({', '.join(read_schema.names)})"
                )

    @override
    def create_planner(self, source: Source[Any, Any, Any]) -> SplitPlanner[Any]:
        assert isinstance(source, HybridSource)
        return HybridSplitPlanner(source)

    @override
    def read_limit_options(self) -> ReadLimitOptions:
        """The last source's limits (``kafka-unified.maxOffsetsPerTrigger``), applied to every stage."""
        return self._child(len(self._options().formats) - 1).read_limit_options()

    @override
    def reader_config(self) -> dict[str, Any]:
        config: dict[str, Any] = {}
        for i in range(len(self._options().formats)):
            config.update(self._child(i).reader_config())
        return config
