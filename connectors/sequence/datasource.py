"""The PySpark adapter of ``sequence-unified``: options in, bridge out."""

from __future__ import annotations

import dataclasses

from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType
from typing_extensions import override

from connector_base.spark import ReadLimitOptions, SourceDataSource, SplitPlanner
from connectors.sequence.options import SequenceOptions
from connectors.sequence.source import SequencePlanner, SequenceSource

SCHEMA = StructType(
    [
        StructField("partition", IntegerType()),
        StructField("index", LongType()),
        StructField("value", StringType()),
    ]
)


class SequenceDataSource(SourceDataSource):
    """``spark.read.format("sequence-unified")``."""

    @classmethod
    @override
    def name(cls) -> str:
        return "sequence-unified"

    @override
    def default_schema(self) -> StructType:
        return SCHEMA

    def _options(self) -> SequenceOptions:
        opts = SequenceOptions.parse(self.options)
        if opts.continuous and "_start_epoch_s" not in self.options:
            # the stream's time origin is fixed once, on the driver, and travels with the options
            import time

            self.options["_start_epoch_s"] = repr(time.time())
        start = float(self.options.get("_start_epoch_s", "0"))
        return dataclasses.replace(opts, start_epoch_s=start)

    @override
    def create_source(self, schema: StructType, streaming: bool) -> SequenceSource:
        return SequenceSource(self._options())

    @override
    def create_planner(self, source: SequenceSource) -> SplitPlanner[object]:  # type: ignore[override]
        return SequencePlanner(source.options)  # type: ignore[return-value]

    @override
    def read_limit_options(self) -> ReadLimitOptions:
        return self._options().read_limits()
