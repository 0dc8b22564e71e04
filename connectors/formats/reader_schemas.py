"""Reader schemas, fixed on the driver when a query is planned and carried to every task.

``resolve_reader_schemas`` asks the registry once (latest version of the subject, a version, or an
id) or takes the inline schema. The result travels inside the Spark schema itself, as metadata of
its first field (``READER_SCHEMAS_KEY``): Spark hands executors the schema ``load()`` returned, so
every task decodes with the reader schema fixed at ``load()``, never a newer latest version, and
no second registry lookup can disagree with the DataFrame's columns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from connector_base import ConnectorError
from connectors.formats.format_options import PayloadFormat, RecordFormatOptions
from connectors.formats.registry_client import RegistryClient

__all__ = ["READER_SCHEMAS_KEY", "ReaderSchema", "from_metadata", "resolve_reader_schemas", "to_metadata"]

READER_SCHEMAS_KEY = "sparkflow.readerSchemas"


@dataclass(frozen=True, slots=True)
class ReaderSchema:
    """The schema one payload (key or value) is decoded to; ``schema_id`` when it came from the registry."""

    role: str
    text: str
    schema_id: int | None = None
    subject: str | None = None
    references: tuple[tuple[str, str], ...] = ()
    """Protobuf: the schemas the reader schema imports (name, text), dependencies first."""

    def to_json(self) -> dict[str, Any]:
        """JSON primitives."""
        out: dict[str, Any] = {
            "role": self.role,
            "text": self.text,
            "id": self.schema_id,
            "subject": self.subject,
        }
        if self.references:
            out["references"] = [list(r) for r in self.references]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ReaderSchema:
        """The inverse of ``to_json``."""
        return cls(
            role=data["role"],
            text=data["text"],
            schema_id=data.get("id"),
            subject=data.get("subject"),
            references=tuple((str(n), str(t)) for n, t in data.get("references", ())),
        )


def _resolve(payload: PayloadFormat, options: RecordFormatOptions, topic: str | None) -> ReaderSchema:
    if payload.inline_schema is not None:
        return ReaderSchema(payload.role, payload.inline_schema)
    assert payload.kind.uses_registry and options.registry is not None
    client = RegistryClient.for_options(options.registry)
    where = f"resolving the {payload.role} reader schema"
    if payload.schema_id is not None:
        text, kind = client.schema_by_id(payload.schema_id, where)
        subject = None
        schema_id = payload.schema_id
    else:
        subject = payload.subject_for(topic, options.strategy)
        if payload.schema_version is not None:
            schema_id, text, kind = client.version(subject, payload.schema_version, where)
        else:
            schema_id, text, kind = client.latest(subject, where)
    if kind.upper() != payload.kind.schema_type:
        raise ConnectorError(
            f"{where}: schema {schema_id} is {kind}, but "
            f"{payload.role}Format={payload.kind.value} expects {payload.kind.schema_type}"
        )
    references: tuple[tuple[str, str], ...] = ()
    if payload.kind.schema_type == "PROTOBUF":
        references = tuple(client.references(schema_id, where))
    return ReaderSchema(payload.role, text, schema_id, subject, references)


def resolve_reader_schemas(options: RecordFormatOptions, topic: str | None) -> dict[str, ReaderSchema]:
    """The reader schema of each decoded payload (``topic``: the single topic read, if one)."""
    return {p.role: _resolve(p, options, topic) for p in options.payloads}


def to_metadata(schemas: dict[str, ReaderSchema]) -> dict[str, str]:
    """Field metadata carrying ``schemas``."""
    return {READER_SCHEMAS_KEY: json.dumps({r: s.to_json() for r, s in schemas.items()}, sort_keys=True)}


def from_metadata(metadata: dict[str, Any] | None) -> dict[str, ReaderSchema] | None:
    """The schemas ``to_metadata`` stored, or ``None``."""
    raw = (metadata or {}).get(READER_SCHEMAS_KEY)
    if raw is None:
        return None
    return {r: ReaderSchema.from_json(d) for r, d in json.loads(raw).items()}
