"""The default schema of each format, found on the driver when the user gives none."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

import pyarrow as pa
from pyspark.sql.types import DataType, LongType, StringType, StructField, StructType

from connector_base import ConnectorError, InvalidOptionError
from connectors.files.compression import decompress, decompress_readable, line_chunks
from connectors.files.csv_inference import CsvInference
from connectors.files.formats.base import UTF8_BOM
from connectors.files.formats.csv import csv_records, dialect_of
from connectors.files.formats.csv_tokens import Tokenizer, first_record
from connectors.files.formats.line_framing import LineFraming
from connectors.files.formats.parquet import file_schema
from connectors.files.inference_sample import InferenceSample
from connectors.files.json_inference import infer_json_documents, infer_jsonl
from connectors.files.listing import FileStatus, list_files
from connectors.files.options import FILE_COLUMN, OFFSET_COLUMN, FileFormat, FileSourceOptions
from connectors.files.partitions import partition_fields
from connectors.files.schema_merge import SchemaMergeError, merge_structs
from connectors.files.time_zone import read_time_zone

SAMPLE_BYTES = 1024 * 1024
"""How much of the first file ``csv`` inference reads (for its first line)."""

TEXT_SCHEMA = StructType([StructField("value", StringType(), True)])
METADATA_FIELDS = [StructField(FILE_COLUMN, StringType(), True), StructField(OFFSET_COLUMN, LongType(), True)]


def _sample(path: str, ignore_corrupt: bool) -> bytes:
    """The first whole lines of the (decompressed) file, about ``SAMPLE_BYTES``."""
    sample = b""
    for _offset, chunk in line_chunks(path, SAMPLE_BYTES, ignore_corrupt):
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


_DECODER = json.JSONDecoder()
INFERENCE_CHUNK_BYTES = 16 * 1024 * 1024
"""``jsonl`` inference reads each file in chunks of about this size (memory stays one chunk)."""


def _document(path: str, ignore_corrupt: bool) -> bytes | None:
    """A ``multiLine`` file's (decompressed) bytes; ``None`` for a corrupt one ``ignoreCorruptFiles``
    skips (its document is cut short)."""
    if not ignore_corrupt:
        return b"".join(c for _o, c in line_chunks(path, INFERENCE_CHUNK_BYTES))
    with open(path, "rb") as f:
        data, whole = decompress_readable(path, f.read(), whole_lines=False)
    if whole:
        return data
    body = data[len(UTF8_BOM) :] if data.startswith(UTF8_BOM) else data
    try:  # a document that ends before the error counts (Jackson stops after it), a cut one not
        _DECODER.raw_decode(body.decode("utf-8").lstrip(" \t\n\r"))
    except (ValueError, RecursionError):
        return None
    return data


def _framed_file(path: str, options: FileSourceOptions, framing: LineFraming) -> bytes:
    """A file of lines ended by ``lineSep`` or in another charset, (decompressed) whole; with
    ``ignoreCorruptFiles``, the lines before a corrupt file's error."""
    with open(path, "rb") as f:
        raw = f.read()
    if not options.ignore_corrupt_files:
        return decompress(path, raw)
    data, whole = decompress_readable(path, raw, whole_lines=False)
    return data if whole else data[: framing.whole_lines_end(data)]


def _jsonl_schema(paths: list[str], options: FileSourceOptions) -> StructType:
    ignore = options.ignore_corrupt_files
    if options.multi_line:  # one document per file, read whole
        documents = ((p, d) for p in paths if (d := _document(p, ignore)) is not None)
        return infer_json_documents(documents, options)
    if options.custom_lines:
        framing = LineFraming.of(options)
        return infer_jsonl(((p, [(0, _framed_file(p, options, framing))]) for p in paths), options)
    return infer_jsonl(((p, line_chunks(p, INFERENCE_CHUNK_BYTES, ignore)) for p in paths), options)


def _csv_lines(path: str, options: FileSourceOptions, framing: LineFraming) -> Iterator[str]:
    """The non-blank lines of a csv file (decompressed, decoded), as Spark's inference sees them."""
    if options.custom_lines:
        chunks: Iterable[tuple[int, bytes]] = [(0, _framed_file(path, options, framing))]
    else:
        chunks = line_chunks(path, INFERENCE_CHUNK_BYTES, options.ignore_corrupt_files)
    first = not options.custom_lines  # the file's first record, as Spark's parser starts on it
    for offset, chunk in chunks:
        data = chunk[len(UTF8_BOM) :] if offset == 0 and chunk.startswith(UTF8_BOM) else chunk
        for _s, line in framing.lines(data):
            text = (framing.to_utf8(line, strict=False) or b"").decode("utf-8", "replace")
            if text.strip():
                yield first_record(text) if first else text
                first = False


def _csv_records_schema(
    by_size: list[FileStatus], options: FileSourceOptions, framing: LineFraming
) -> StructType:
    """``multiLine`` csv: the header (or column count) from the first record of the largest file, the
    types (``inferSchema``) from every file's records, each file's first one left out with ``header``."""
    tokenizer = Tokenizer(dialect_of(options.csv))
    per_file = []
    for f in by_size if options.infer_types else by_size[:1]:  # without inferSchema: the header only
        text = (framing.to_utf8(_framed_file(f.path, options, framing), strict=False) or b"").decode(
            "utf-8", "replace"
        )
        per_file.append(csv_records(first_record(text), options.line_sep, tokenizer))
    first = per_file[0][0] if per_file and per_file[0] else ""
    row = tokenizer.fields(first) if first else []
    names = _csv_names(row, options)
    types: list[DataType] = [StringType()] * len(names)
    if options.infer_types:
        inference = CsvInference(len(names), options.csv.null_value)
        sample = InferenceSample(options.sampling_ratio)
        for records in per_file:
            kept = records[1:] if options.csv.header else records
            inference.infer_file(tokenizer.fields(r) for r in kept if sample.keep())
        types = inference.spark_types()
    return StructType([StructField(n, t, True) for n, t in zip(names, types, strict=True)])


def _csv_names(row: list[str], options: FileSourceOptions) -> list[str]:
    """The columns' names from the first record: its fields with ``header`` (an empty or null one is
    ``_c<i>``, as Spark names it), else ``_c0``, ``_c1``, ..."""
    if options.csv.header:
        return [n if n and n != options.csv.null_value else f"_c{i}" for i, n in enumerate(row)]
    return [f"_c{i}" for i in range(len(row))]


def _csv_schema(files: list[FileStatus], options: FileSourceOptions) -> StructType:
    """Spark takes the header (or the column count) from the first line of its first partition,
    which holds the largest file; with ``inferSchema``, the types from every (sampled) line."""
    framing = LineFraming.of(options)
    by_size = sorted(files, key=lambda f: (-f.size, f.path))
    if options.multi_line:
        return _csv_records_schema(by_size, options, framing)
    if options.custom_lines:
        first = next(_csv_lines(by_size[0].path, options, framing), "")
    else:
        sample = _sample(by_size[0].path, options.ignore_corrupt_files)
        if sample.startswith(UTF8_BOM):
            sample = sample[len(UTF8_BOM) :]
        lines = (line for _s, line in framing.lines(sample))
        first = next((line for line in lines if line.strip()), b"").decode("utf-8", "replace")  # as Spark
        first = first_record(first) if first else first
    tokenizer = Tokenizer(dialect_of(options.csv))
    row = tokenizer.fields(first) if first else []
    names = _csv_names(row, options)
    types: list[DataType] = [StringType()] * len(names)
    if options.infer_types:
        inference = CsvInference(len(names), options.csv.null_value)
        sample_lines = InferenceSample(options.sampling_ratio)
        for f in by_size:  # one partition per small file, as Spark plans them
            lines = (
                line
                for line in _csv_lines(f.path, options, framing)
                if not (options.csv.header and line == first) and sample_lines.keep()
            )
            inference.infer_file(tokenizer.fields(line) for line in lines)
        types = inference.spark_types()
    return StructType([StructField(n, t, True) for n, t in zip(names, types, strict=True)])


def _merged(base: StructType, other: StructType, path: str) -> StructType:
    try:
        return merge_structs(base, other)
    except SchemaMergeError as e:
        raise ConnectorError(
            f"mergeSchema=true: the schema of {path} does not merge with the others' ({e}); give a "
            "schema with .schema(...), or read without mergeSchema"
        ) from None


def _modified(files: list[FileStatus], options: FileSourceOptions) -> list[FileStatus]:
    """The files ``modifiedBefore`` / ``modifiedAfter`` keep (on the driver: the ``timeZone`` option,
    else the JVM's default zone, see time_zone.py)."""
    if not options.modified.active:
        return files
    zone = read_time_zone(options.csv.time_zone)
    return [f for f in files if options.modified.accepts(f.mtime_ms, zone)]


def _footer(path: str, options: FileSourceOptions) -> pa.Schema | None:
    """The file's Parquet schema; ``None`` for a corrupt file ``ignoreCorruptFiles`` skips."""
    try:
        return file_schema(path)
    except ConnectorError:
        if options.ignore_corrupt_files:
            return None
        raise


def infer_schema(options: FileSourceOptions) -> StructType:
    """The schema ``files-unified`` reads with when the user gives none (see docs/files.md)."""
    parts: list[StructField] = []
    if options.discovers_partitions:
        listed = list_files(options.path, True, options.name_filter())
        parts = partition_fields(options.path, [f.path for f in _modified(listed, options)])
    if options.format is FileFormat.TEXT:
        base = TEXT_SCHEMA
    else:
        listed = list_files(options.path, options.lists_recursively, options.name_filter())
        files = [f for f in _modified(listed, options) if f.size > 0]
        if not files:
            raise InvalidOptionError(
                "path",
                options.path,
                f"a location holding at least one non-empty {options.format.value} file to infer the schema "
                f"from (or give a schema with .schema(...))",
            )
        match options.format:
            case FileFormat.PARQUET:  # every footer: a corrupt file fails at load() (or is skipped)
                files = sorted(files, key=lambda f: f.path)  # Spark's order: by path, not by time
                schemas = [_footer(f.path, options) for f in files]
                if schemas[0] is None and not options.merge_schema:  # Spark infers from it alone
                    raise InvalidOptionError(
                        "path",
                        options.path,
                        f"a location whose first Parquet file (by path) is not corrupt, to infer the schema "
                        f"from ({files[0].path} is, and ignoreCorruptFiles skips it; Spark fails with "
                        f"UNABLE_TO_INFER_SCHEMA too), mergeSchema=true, or give a schema with .schema(...)",
                    )
                if options.merge_schema:  # every readable footer's schema, merged in path order
                    readable = [(f, t) for f, t in zip(files, schemas, strict=True) if t is not None]
                    if not readable:
                        base = StructType([])
                    else:
                        base = _from_arrow(readable[0][1], readable[0][0].path)
                    for f, schema in readable[1:]:
                        base = _merged(base, _from_arrow(schema, f.path), f.path)
                else:
                    assert schemas[0] is not None
                    base = _from_arrow(schemas[0], files[0].path)
            case FileFormat.JSONL:
                base = _jsonl_schema([f.path for f in files], options)
            case _:
                base = _csv_schema(files, options)
    fields = list(base.fields) + [p for p in parts if p.name not in base.fieldNames()]
    if options.include_metadata:
        fields += [f for f in METADATA_FIELDS if f.name not in base.fieldNames()]
    return StructType(fields)
