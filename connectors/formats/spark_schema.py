"""The DataFrame schema of a source whose key/value are decoded, with its reader schemas pinned inside.

``decoded_schema(base, options, topic)`` resolves the reader schemas (driver, at ``load()``) and
returns the Spark schema; ``decoder_for(schema, options)`` rebuilds the ``RecordDecoder`` on any
worker from the schema Spark hands back (no registry lookup of the reader schema there).
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.types import StructField, StructType

from connectors.formats.format_options import RecordFormatOptions
from connectors.formats.reader_schemas import from_metadata, resolve_reader_schemas, to_metadata
from connectors.formats.record_decoder import RecordDecoder

__all__ = ["decoded_schema", "decoder_for", "pinned_schema"]


def decoded_schema(
    base: pa.Schema, options: RecordFormatOptions, topic: str | None, columns: dict[str, str] | None = None
) -> StructType:
    """The Spark schema of decoded rows (reader schemas resolved now and kept in field metadata)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    readers = resolve_reader_schemas(options, topic)
    arrow = RecordDecoder(options, readers, columns).output_schema(base)
    spark = from_arrow_schema(arrow, prefer_timestamp_ntz=True)
    first = spark.fields[0]
    pinned = StructField(
        first.name, first.dataType, first.nullable, {**(first.metadata or {}), **to_metadata(readers)}
    )
    return StructType([pinned, *spark.fields[1:]])


def pinned_schema(
    base: pa.Schema, options: RecordFormatOptions, schema: StructType, columns: dict[str, str] | None = None
) -> StructType | None:
    """The decoded schema from the reader schemas pinned in ``schema`` (``None`` if it has none).

    What a user-given or Spark-handed-back schema must equal: the columns ``load()`` derived, not
    those of a newer latest version registered since.
    """
    from pyspark.sql.pandas.types import from_arrow_schema

    readers = from_metadata(schema.fields[0].metadata if schema.fields else None)
    if readers is None:
        return None
    return from_arrow_schema(
        RecordDecoder(options, readers, columns).output_schema(base), prefer_timestamp_ntz=True
    )


def decoder_for(
    schema: StructType, options: RecordFormatOptions, topic: str | None, columns: dict[str, str] | None = None
) -> RecordDecoder:
    """The decoder of rows in ``schema`` (its pinned reader schemas; resolved now if it has none)."""
    readers = from_metadata(schema.fields[0].metadata if schema.fields else None)
    if readers is None:
        readers = resolve_reader_schemas(options, topic)
    return RecordDecoder(options, readers, columns)
