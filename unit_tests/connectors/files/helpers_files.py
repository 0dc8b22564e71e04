"""Shared helpers of the files-unified unit tests (no Spark)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa
from pyspark.sql.types import StructType

from connector_base.spark import to_arrow_schema
from connector_base.spark.partition_reader import read_splits_as_arrow
from connectors.files import FilePlanner, FileSource, FileSourceOptions, FileSourceSplit
from connectors.files.formats import ReadSchema
from connectors.files.listing import list_files
from connectors.files.source import whole_file_split


def make_source(options: Mapping[str, str], schema: StructType) -> FileSource:
    opts = FileSourceOptions.parse(dict(options))
    return FileSource(opts, ReadSchema.of(to_arrow_schema(schema), opts))


def read(source: FileSource, splits: Sequence[FileSourceSplit]) -> pa.Table:
    """Read ``splits`` the way a Spark executor does (fetcher thread, queue, emitter, Arrow output)."""
    arrow = source.schema.output
    batches = list(read_splits_as_arrow(source, list(splits), arrow, 65_536))
    return pa.Table.from_batches(batches, schema=arrow) if batches else arrow.empty_table()


def whole_files(source: FileSource) -> list[FileSourceSplit]:
    opts = source.options
    return [
        whole_file_split(
            s,
            opts.format,
            whole=opts.whole_files,
            ignore_corrupt=opts.ignore_corrupt_files,
            defer_corrupt=opts.modified.active,
        )
        for s in list_files(opts.path, opts.lists_recursively, opts.name_filter())
    ]


def read_ranges(options: Mapping[str, str], schema: StructType, split_size: int | None = None) -> list[dict]:
    """Every file under ``options``' path, cut into ``splitSizeBytes`` ranges as the planner cuts
    them, read as rows."""
    if split_size:
        options = {**options, "splitSizeBytes": str(split_size)}
    source = make_source(options, schema)
    planner = FilePlanner(source.options)
    ranges = [r for s in whole_files(source) for r in planner.range_splits(s, s.offset, s.end)]
    return read(source, ranges).to_pylist()
