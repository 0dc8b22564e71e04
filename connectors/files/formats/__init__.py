"""The formats of ``files-unified``: row formats parsed from line chunks, and Parquet by row groups."""

from __future__ import annotations

from connectors.files.formats.base import LineFormat, ReadSchema, line_bounds
from connectors.files.formats.csv import CsvFormat
from connectors.files.formats.jsonl import JsonDocumentFormat, JsonLinesFormat
from connectors.files.formats.parquet import ParquetRowGroupReader
from connectors.files.formats.text import TextFormat
from connectors.files.options import FileFormat, FileSourceOptions

__all__ = [
    "CsvFormat",
    "JsonDocumentFormat",
    "JsonLinesFormat",
    "LineFormat",
    "ParquetRowGroupReader",
    "ReadSchema",
    "TextFormat",
    "line_format",
    "line_bounds",
]


def line_format(options: FileSourceOptions, schema: ReadSchema) -> LineFormat:
    """The parser of a row format."""
    match options.format:
        case FileFormat.TEXT:
            return TextFormat(schema, options)
        case FileFormat.JSONL if options.multi_line:
            return JsonDocumentFormat(schema, options)
        case FileFormat.JSONL:
            return JsonLinesFormat(schema, options)
        case FileFormat.CSV:
            return CsvFormat(schema, options)
        case _:
            raise ValueError(f"{options.format.value} is not a row format")
