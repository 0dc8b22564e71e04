"""The default schema of each format, found on the driver when the user gives none."""

from __future__ import annotations

import csv
import gzip
import io

import pyarrow as pa
import pyarrow.json as pj
from pyspark.sql.types import LongType, StringType, StructField, StructType

from connector_base import ConnectorError, InvalidOptionError
from connectors.files.formats.parquet import file_schema
from connectors.files.listing import list_files
from connectors.files.options import FILE_COLUMN, OFFSET_COLUMN, FileFormat, FileSourceOptions
from connectors.files.partitions import partition_fields
from connectors.files.source import GZIP_SUFFIXES

SAMPLE_BYTES = 1024 * 1024
"""How much of the first file ``jsonl`` inference reads."""

TEXT_SCHEMA = StructType([StructField("value", StringType(), True)])
METADATA_FIELDS = [StructField(FILE_COLUMN, StringType(), True), StructField(OFFSET_COLUMN, LongType(), True)]


def _sample(path: str) -> bytes:
    if path.lower().endswith(GZIP_SUFFIXES):
        with gzip.open(path, "rb") as f:
            data = f.read(SAMPLE_BYTES)
    else:
        with open(path, "rb") as f:
            data = f.read(SAMPLE_BYTES)
    if len(data) == SAMPLE_BYTES and b"\n" in data:
        data = data[: data.rfind(b"\n") + 1]
    return data


def _nulls_as_strings(t: pa.DataType) -> pa.DataType:
    if pa.types.is_null(t):
        return pa.string()
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _nulls_as_strings(f.type)) for f in t])
    if pa.types.is_list(t):
        return pa.list_(_nulls_as_strings(t.value_type))
    return t


def _from_arrow(schema: pa.Schema, path: str) -> StructType:
    from pyspark.sql.pandas.types import from_arrow_schema

    try:
        return from_arrow_schema(schema, prefer_timestamp_ntz=False)
    except Exception as e:  # an Arrow type Spark has no type for (unsigned integers, ...)
        raise ConnectorError(
            f"the schema of {path} has no Spark equivalent ({e}); give a schema with .schema(...)"
        ) from e


def _jsonl_schema(path: str) -> StructType:
    try:
        table = pj.read_json(
            io.BytesIO(_sample(path)), read_options=pj.ReadOptions(block_size=SAMPLE_BYTES + 1)
        )
    except (pa.ArrowInvalid, OSError) as e:
        raise ConnectorError(
            f"cannot infer a jsonl schema from the start of {path} ({e}); give a schema with .schema(...)"
        ) from e
    arrow = pa.schema([pa.field(f.name, _nulls_as_strings(f.type)) for f in table.schema])
    return _from_arrow(arrow, path)


def _csv_schema(path: str, options: FileSourceOptions) -> StructType:
    sample = _sample(path)
    first = sample.split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8", "replace")
    dialect = options.csv
    row = next(
        csv.reader(
            [first],
            delimiter=dialect.sep,
            quotechar=dialect.quote or '"',
            quoting=csv.QUOTE_MINIMAL if dialect.quote else csv.QUOTE_NONE,
        ),
        [],
    )
    names = row if dialect.header else [f"_c{i}" for i in range(len(row))]
    return StructType([StructField(n, StringType(), True) for n in names])


def infer_schema(options: FileSourceOptions) -> StructType:
    """The schema ``files-unified`` reads with when the user gives none (see docs/files.md)."""
    parts: list[StructField] = []
    if options.recursive:
        parts = partition_fields(options.path, [f.path for f in list_files(options.path, True)])
    if options.format is FileFormat.TEXT:
        base = TEXT_SCHEMA
    else:
        files = [f for f in list_files(options.path, options.recursive) if f.size > 0]
        if not files:
            raise InvalidOptionError(
                "path",
                options.path,
                f"a location holding at least one non-empty {options.format.value} file to infer the schema "
                f"from (or give a schema with .schema(...))",
            )
        first = files[0].path
        match options.format:
            case FileFormat.PARQUET:
                base = _from_arrow(file_schema(first), first)
            case FileFormat.JSONL:
                base = _jsonl_schema(first)
            case _:
                base = _csv_schema(first, options)
    fields = list(base.fields) + [p for p in parts if p.name not in base.fieldNames()]
    if options.include_metadata:
        fields += [f for f in METADATA_FIELDS if f.name not in base.fieldNames()]
    return StructType(fields)
