"""The default schema of each format, found on the driver when the user gives none."""

from __future__ import annotations

import csv

import pyarrow as pa
from pyspark.sql.types import LongType, StringType, StructField, StructType

from connector_base import ConnectorError, InvalidOptionError
from connectors.files.compression import line_chunks
from connectors.files.formats.base import UTF8_BOM, line_bounds
from connectors.files.formats.parquet import file_schema
from connectors.files.json_inference import infer_jsonl
from connectors.files.listing import list_files
from connectors.files.options import FILE_COLUMN, OFFSET_COLUMN, FileFormat, FileSourceOptions
from connectors.files.partitions import partition_fields

SAMPLE_BYTES = 1024 * 1024
"""How much of the first file ``csv`` inference reads (for its first line)."""

TEXT_SCHEMA = StructType([StructField("value", StringType(), True)])
METADATA_FIELDS = [StructField(FILE_COLUMN, StringType(), True), StructField(OFFSET_COLUMN, LongType(), True)]


def _sample(path: str) -> bytes:
    """The first whole lines of the (decompressed) file, about ``SAMPLE_BYTES``."""
    sample = b""
    for _offset, chunk in line_chunks(path, SAMPLE_BYTES):
        sample += chunk
        if len(sample) >= SAMPLE_BYTES:
            break
    return sample


def _from_arrow(schema: pa.Schema, path: str) -> StructType:
    from pyspark.sql.pandas.types import from_arrow_schema

    try:
        return from_arrow_schema(schema, prefer_timestamp_ntz=False)
    except Exception as e:  # an Arrow type Spark has no type for (unsigned integers, ...)
        raise ConnectorError(
            f"the schema of {path} has no Spark equivalent ({e}); give a schema with .schema(...)"
        ) from e


INFERENCE_CHUNK_BYTES = 16 * 1024 * 1024
"""``jsonl`` inference reads each file in chunks of about this size (memory stays one chunk)."""


def _jsonl_schema(paths: list[str], options: FileSourceOptions) -> StructType:
    return infer_jsonl(((p, line_chunks(p, INFERENCE_CHUNK_BYTES)) for p in paths), options)


def _csv_schema(path: str, options: FileSourceOptions) -> StructType:
    sample = _sample(path)
    if sample.startswith(UTF8_BOM):
        sample = sample[len(UTF8_BOM) :]
    starts, ends = line_bounds(sample)
    lines = (sample[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True))
    first = next((line for line in lines if line.strip()), b"").decode("utf-8", "replace")  # as Spark
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
                schemas = [file_schema(f.path) for f in files]  # every footer: a corrupt file fails at load()
                base = _from_arrow(schemas[0], first)
            case FileFormat.JSONL:
                base = _jsonl_schema([f.path for f in files], options)
            case _:  # Spark takes the first line of its first partition: the largest file's
                largest = min(files, key=lambda f: (-f.size, f.path))
                base = _csv_schema(largest.path, options)
    fields = list(base.fields) + [p for p in parts if p.name not in base.fieldNames()]
    if options.include_metadata:
        fields += [f for f in METADATA_FIELDS if f.name not in base.fieldNames()]
    return StructType(fields)
