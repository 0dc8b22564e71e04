"""Writer schemas of the sink, fixed on the driver: the subject's (looked up or registered) or inline.

For ``avro-confluent`` the schema comes from ``<p>SchemaId``, ``<p>SchemaVersion``, the inline
``<p>Schema`` (which must already be registered under the subject unless
``autoRegisterSchemas=true``, then it is registered, subject to the subject's compatibility rules)
or, by default, the subject's latest version. Plain ``avro`` uses the inline schema and no header.
The resolved schemas travel to the writer tasks inside the pickled writer.
"""

from __future__ import annotations

from dataclasses import dataclass

from connector_base import ConnectorError
from connectors.formats.format_options import FormatKind, PayloadFormat, RecordFormatOptions
from connectors.formats.registry_client import RegistryClient, SchemaNotFoundError

__all__ = ["WriterSchema", "resolve_writer_schemas"]


@dataclass(frozen=True, slots=True)
class WriterSchema:
    """The schema a payload is encoded with; ``schema_id`` is written in the header (Confluent format)."""

    role: str
    text: str
    schema_id: int | None


def _resolve(payload: PayloadFormat, options: RecordFormatOptions, topic: str | None) -> WriterSchema:
    if payload.kind is FormatKind.AVRO:
        assert payload.inline_schema is not None
        return WriterSchema(payload.role, payload.inline_schema, None)
    assert options.registry is not None
    client = RegistryClient.for_options(options.registry)
    where = f"resolving the {payload.role} writer schema"
    if payload.schema_id is not None:
        text, _kind = client.schema_by_id(payload.schema_id, where)
        return WriterSchema(payload.role, text, payload.schema_id)
    subject = payload.subject_for(topic, options.strategy)
    if payload.inline_schema is not None:
        if options.auto_register:
            return WriterSchema(
                payload.role,
                payload.inline_schema,
                client.register(subject, payload.inline_schema, "AVRO", where),
            )
        try:
            schema_id = client.lookup(subject, payload.inline_schema, "AVRO", where)
        except SchemaNotFoundError:
            raise ConnectorError(
                f"{where}: the inline {payload.role}Schema is not registered under subject {subject!r}; "
                "register "
                "it, or set autoRegisterSchemas=true to let the sink register it"
            ) from None
        return WriterSchema(payload.role, payload.inline_schema, schema_id)
    if payload.schema_version is not None:
        schema_id, text, _kind = client.version(subject, payload.schema_version, where)
    else:
        schema_id, text, _kind = client.latest(subject, where)
    return WriterSchema(payload.role, text, schema_id)


def resolve_writer_schemas(options: RecordFormatOptions, topic: str | None) -> dict[str, WriterSchema]:
    """The writer schema of each encoded payload (``topic``: the sink's ``topic`` option)."""
    return {p.role: _resolve(p, options, topic) for p in options.payloads}
