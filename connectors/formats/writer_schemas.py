"""Writer schemas of the sink, fixed on the driver: the subject's (looked up or registered) or inline.

For ``avro-confluent`` (and ``json-confluent``, ``protobuf-confluent``) the schema comes from
``<p>SchemaId``, ``<p>SchemaVersion``, the inline ``<p>Schema`` (which must already be registered
under the subject unless ``autoRegisterSchemas=true``, then it is registered, subject to the
subject's compatibility rules) or, by default, the subject's latest version. Plain ``avro`` uses
the inline schema and no header.
The resolved schemas travel to the writer tasks inside the pickled writer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from connector_base import ConnectorError
from connectors.formats.avro_encoder import AvroEncoder
from connectors.formats.format_options import PayloadFormat, RecordFormatOptions
from connectors.formats.json_encoder import JsonEncoder
from connectors.formats.protobuf_encoder import ProtobufEncoder
from connectors.formats.registry_client import RegistryClient, SchemaNotFoundError

__all__ = ["PayloadEncoder", "WriterSchema", "resolve_writer_schemas", "writer_encoder"]


@dataclass(frozen=True, slots=True)
class WriterSchema:
    """The schema a payload is encoded with; ``schema_id`` is written in the header (Confluent format)."""

    role: str
    text: str
    schema_id: int | None
    schema_type: str = "AVRO"
    message_name: str | None = None
    """Protobuf: the message written (``<p>RecordName``), else the schema's first."""
    references: tuple[tuple[str, str], ...] = ()
    validate: bool = True
    """JSON Schema: rows are validated before they are written (``<p>Validate``)."""
    """Protobuf: the schemas it imports (name, text), dependencies first."""


PayloadEncoder = AvroEncoder | JsonEncoder | ProtobufEncoder


def writer_encoder(schema: WriterSchema) -> PayloadEncoder:
    """The encoder of ``schema``'s language."""
    if schema.schema_type == "PROTOBUF":
        return ProtobufEncoder(schema.text, schema.schema_id, schema.message_name, schema.references)
    if schema.schema_type == "JSON":
        return JsonEncoder(schema.text, schema.schema_id, schema.validate)
    return AvroEncoder(schema.text, schema.schema_id)


def _resolve(payload: PayloadFormat, options: RecordFormatOptions, topic: str | None) -> WriterSchema:
    if payload.kind.decoded_inline:
        assert payload.inline_schema is not None
        return WriterSchema(payload.role, payload.inline_schema, None, payload.kind.schema_type)
    assert options.registry is not None
    client = RegistryClient.for_options(options.registry)
    where = f"resolving the {payload.role} writer schema"
    if payload.schema_id is not None:
        text, _kind = client.schema_by_id(payload.schema_id, where)
        return WriterSchema(payload.role, text, payload.schema_id, payload.kind.schema_type)
    subject = payload.subject_for(topic, options.strategy)
    if payload.inline_schema is not None:
        if options.auto_register:
            return WriterSchema(
                payload.role,
                payload.inline_schema,
                client.register(subject, payload.inline_schema, payload.kind.schema_type, where),
                payload.kind.schema_type,
            )
        try:
            schema_id = client.lookup(subject, payload.inline_schema, payload.kind.schema_type, where)
        except SchemaNotFoundError:
            raise ConnectorError(
                f"{where}: the inline {payload.role}Schema is not registered under subject {subject!r}; "
                "register "
                "it, or set autoRegisterSchemas=true to let the sink register it"
            ) from None
        return WriterSchema(payload.role, payload.inline_schema, schema_id, payload.kind.schema_type)
    if payload.schema_version is not None:
        schema_id, text, _kind = client.version(subject, payload.schema_version, where)
    else:
        schema_id, text, _kind = client.latest(subject, where)
    return WriterSchema(payload.role, text, schema_id, payload.kind.schema_type)


def _with_protobuf(
    schema: WriterSchema, payload: PayloadFormat, options: RecordFormatOptions
) -> WriterSchema:
    if schema.schema_type != "PROTOBUF":
        return schema
    references: tuple[tuple[str, str], ...] = ()
    if schema.schema_id is not None and options.registry is not None:
        client = RegistryClient.for_options(options.registry)
        references = tuple(client.references(schema.schema_id, f"resolving the {payload.role} writer schema"))
    encoder_check = ProtobufEncoder(schema.text, schema.schema_id, payload.record_name, references)
    del encoder_check  # compiled once on the driver: a schema that does not compile fails at start
    return replace(schema, message_name=payload.record_name, references=references)


def resolve_writer_schemas(options: RecordFormatOptions, topic: str | None) -> dict[str, WriterSchema]:
    """The writer schema of each encoded payload (``topic``: the sink's ``topic`` option)."""
    return {
        p.role: replace(_with_protobuf(_resolve(p, options, topic), p, options), validate=p.validate)
        for p in options.payloads
    }
