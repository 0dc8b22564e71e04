"""The DataFrame schema of a source whose key/value are decoded, with its reader schemas pinned inside.

``decoded_schema(base, options, topic)`` resolves the reader schemas (driver, at ``load()``) and
returns the Spark schema; ``decoder_for(schema, options)`` rebuilds the ``RecordDecoder`` on any
worker from the schema Spark hands back (no registry lookup of the reader schema there).

Replay: ``replay_metadata(schema)`` is what a streaming query's offsets record of its reader
schemas (id, subject, and a digest of the text, per key/value), and ``check_replay(recorded,
schema, options)`` runs when a restarted query resumes or replays from such an offset. The
DataFrame's columns are fixed by the restarted query's own ``load()`` before Spark reads the
checkpoint, so a reader schema that changed in between (a new latest version) cannot be swapped
back silently: with ``schemaEvolutionMode=keep`` the restart fails before reading anything, naming
the checkpoint's schema id and the option that pins it (``valueSchemaId=<id>``), so the replayed
and later batches decode exactly as before; with ``schemaEvolutionMode=fail`` the new version is
taken, which is what that mode's restart is for.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructField, StructType

from connector_base import ConnectorError
from connectors.formats.format_options import RecordFormatOptions
from connectors.formats.reader_schemas import from_metadata, resolve_reader_schemas, to_metadata
from connectors.formats.record_decoder import RecordDecoder

__all__ = [
    "ReaderSchemasInOffsets",
    "check_replay",
    "decoded_schema",
    "decoder_for",
    "pinned_schema",
    "replay_metadata",
]

LOG = logging.getLogger(__name__)


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


def replay_metadata(schema: StructType) -> dict[str, Any] | None:
    """The reader schemas pinned in ``schema``, as a streaming offset records them (``None``: none)."""
    readers = from_metadata(schema.fields[0].metadata if schema.fields else None)
    if not readers:
        return None
    return {
        "readerSchemas": {
            role: {
                "id": r.schema_id,
                "subject": r.subject,
                "sha256": hashlib.sha256(r.text.encode()).hexdigest(),
            }
            for role, r in sorted(readers.items())
        }
    }


def check_replay(recorded: Any, schema: StructType, options: RecordFormatOptions) -> None:
    """Refuse (``keep``) or accept (``fail``) a restart whose reader schemas differ from the checkpoint's."""
    was = recorded.get("readerSchemas") if isinstance(recorded, dict) else None
    now = (replay_metadata(schema) or {}).get("readerSchemas", {})
    if not isinstance(was, dict):
        return
    for role, old in sorted(was.items()):
        new = now.get(role)
        if new is not None and old.get("sha256") == new.get("sha256"):
            continue
        old_desc = _describe(old)
        new_desc = _describe(new) if new is not None else f"no {role} decoding"
        if options.fail_on_new_fields and new is not None:
            LOG.warning(
                "the checkpoint decoded the %s with %s; this restart decodes with %s "
                "(schemaEvolutionMode=fail: a restart takes the new version)",
                role, old_desc, new_desc,
            )  # fmt: skip
            continue
        pin = f"; set {role}SchemaId={old['id']} to go on with it" if old.get("id") is not None else ""
        raise ConnectorError(
            f"the checkpoint's offsets decoded the {role} with reader schema {old_desc}, but this query's "
            f"load() fixed {new_desc}: a replay would decode its batches differently{pin}, or start a new "
            "checkpointLocation to read with the new schema (schemaEvolutionMode=keep keeps the reader "
            "schema a checkpoint started with; schemaEvolutionMode=fail takes a new version on restart)"
        )


def _describe(entry: dict[str, Any]) -> str:
    if entry.get("id") is None:
        return f"(inline, sha256 {str(entry.get('sha256'))[:12]})"
    subject = f" of subject {entry['subject']!r}" if entry.get("subject") else ""
    return f"id {entry['id']}{subject}"


class ReaderSchemasInOffsets:
    """``SourceDataSource`` hooks (``offset_metadata``, ``check_offset_metadata``) of a decoding source.

    Mixed in before ``SourceDataSource`` by the Kafka and Pravega data sources, which give
    ``_formats()``: their offsets keep the reader schemas, and a restart is checked against them.
    """

    def _formats(self) -> RecordFormatOptions:
        raise NotImplementedError

    def offset_metadata(self, schema: StructType) -> dict[str, Any] | None:
        """The reader schemas ``load()`` fixed (id, subject, digest), kept in every offset."""
        return replay_metadata(schema) if self._formats().active else None

    def check_offset_metadata(self, recorded: Any, schema: StructType) -> None:
        """A restart must decode with the checkpoint's reader schemas (``schemaEvolutionMode=keep``)."""
        if self._formats().active:
            check_replay(recorded, schema, self._formats())
