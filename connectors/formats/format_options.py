"""``RecordFormatOptions``: ``keyFormat`` / ``valueFormat`` and their settings, parsed once.

Options (case-insensitive; ``<p>`` is ``key`` or ``value``):

- ``<p>Format``: ``binary`` (default: the bytes, unchanged) | ``avro-confluent`` (Confluent wire
  format: magic 0, 4-byte schema id, Avro body) | ``avro`` (plain Avro body, schema given inline) |
  ``json-confluent`` (the header, then JSON; JSON Schema in the registry) | ``json`` (plain JSON,
  JSON Schema given inline) | ``protobuf-confluent`` (the header, the message indexes, then the
  Protobuf message; ``.proto`` schema in the registry; ``<p>RecordName`` picks the message, else the
  schema's first).
- ``<p>Subject``: explicit subject for the reader schema; else ``subjectNameStrategy`` =
  ``topic`` (default: ``<topic>-<p>``), ``record`` (``<p>RecordName``) or ``topic-record``
  (``<topic>-<p>RecordName``).
- The reader schema: ``<p>Schema`` (inline JSON), ``<p>SchemaId``, ``<p>SchemaVersion`` (of the
  subject), else the subject's latest version; fixed on the driver when the query is planned.
- ``mode``: ``FAILFAST`` (default) | ``PERMISSIVE`` (malformed rows kept: decoded columns null,
  the reason in ``columnNameOfCorruptRecord``, default ``_corrupt_record``) | ``DROPMALFORMED``.
- ``valueLayout`` / ``keyLayout``: ``columns`` (default: the record's fields become top-level
  columns; key fields prefixed with ``keyFieldsPrefix``, default ``key_``) | ``struct`` (one column
  ``value`` / ``key`` of the decoded type).
- ``schemaEvolutionMode``: ``keep`` (default: records of newer writer schemas are resolved to the
  reader schema fixed at start) | ``fail`` (a writer schema with a field the reader schema lacks
  fails the query, naming the schema id and fields: restart it to read them).
- ``autoRegisterSchemas`` (sink): ``false`` (default: an inline schema must be registered) | ``true``.
- ``schemaRegistry.*``: the registry client's settings (``registry_client``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from connector_base import InvalidOptionError
from connectors.formats.registry_client import REGISTRY_PREFIX, RegistryOptions

__all__ = [
    "FORMAT_OPTION_NAMES",
    "FormatKind",
    "Layout",
    "ParseMode",
    "PayloadFormat",
    "RecordFormatOptions",
    "SubjectStrategy",
    "is_format_option",
]

DEFAULT_CORRUPT_COLUMN = "_corrupt_record"
DEFAULT_KEY_PREFIX = "key_"


class FormatKind(Enum):
    """How a key or value is encoded."""

    BINARY = "binary"
    AVRO_CONFLUENT = "avro-confluent"
    AVRO = "avro"
    JSON_CONFLUENT = "json-confluent"
    JSON = "json"
    PROTOBUF_CONFLUENT = "protobuf-confluent"

    @property
    def uses_registry(self) -> bool:
        """Whether records carry a registry schema id."""
        return self in (FormatKind.AVRO_CONFLUENT, FormatKind.JSON_CONFLUENT, FormatKind.PROTOBUF_CONFLUENT)

    @property
    def decoded_inline(self) -> bool:
        """Whether the format decodes with an inline schema and no header (``avro``, ``json``)."""
        return self in (FormatKind.AVRO, FormatKind.JSON)

    @property
    def schema_type(self) -> str:
        """The registry's name of the schema language (``AVRO``, ``JSON``, ``PROTOBUF``)."""
        if self is FormatKind.PROTOBUF_CONFLUENT:
            return "PROTOBUF"
        return "JSON" if self in (FormatKind.JSON_CONFLUENT, FormatKind.JSON) else "AVRO"


class ParseMode(Enum):
    """What a malformed record does (Spark's names)."""

    FAILFAST = "FAILFAST"
    PERMISSIVE = "PERMISSIVE"
    DROPMALFORMED = "DROPMALFORMED"


class SubjectStrategy(Enum):
    """Confluent's subject name strategies."""

    TOPIC = "topic"
    RECORD = "record"
    TOPIC_RECORD = "topic-record"


class Layout(Enum):
    """Decoded fields as top-level columns, or one struct column."""

    COLUMNS = "columns"
    STRUCT = "struct"


_PER_PAYLOAD = (
    "format", "subject", "schema", "schemaid", "schemaversion", "recordname", "layout", "validate",
)  # fmt: skip
FORMAT_OPTION_NAMES = frozenset(
    {f"{p}{s}" for p in ("key", "value") for s in _PER_PAYLOAD}
    | {
        "subjectnamestrategy",
        "mode",
        "columnnameofcorruptrecord",
        "keyfieldsprefix",
        "autoregisterschemas",
        "schemaevolutionmode",
    }
)
"""Lower-case names of the options this module reads (besides ``schemaRegistry.*``)."""


def is_format_option(key: str, mode_option: str = "mode") -> bool:
    """Whether a lower-case option name belongs to the record formats (``mode_option``: parse mode's name)."""
    if key == "mode" and mode_option != "mode":
        return False  # the source's own option (Pravega's read mode)
    return key in FORMAT_OPTION_NAMES or key == mode_option or key.startswith(REGISTRY_PREFIX)


def _enum(
    opts: Mapping[str, str], key: str, name: str, kind: type[Enum], default: Enum, upper: bool = False
) -> Enum:
    raw = opts.get(key)
    if raw is None:
        return default
    value = raw.strip().upper() if upper else raw.strip().lower()
    for member in kind:
        if member.value == value:
            return member
    raise InvalidOptionError(name, raw, " or ".join(str(m.value) for m in kind))


def _positive(opts: Mapping[str, str], key: str, name: str) -> int | None:
    raw = opts.get(key)
    if raw is None:
        return None
    if not raw.strip().isdigit() or int(raw) < 1:
        raise InvalidOptionError(name, raw, "a positive integer")
    return int(raw)


@dataclass(frozen=True, slots=True)
class PayloadFormat:
    """The format of the key or of the value, and where its reader schema comes from."""

    role: str
    kind: FormatKind = FormatKind.BINARY
    subject: str | None = None
    record_name: str | None = None
    inline_schema: str | None = None
    schema_id: int | None = None
    schema_version: int | None = None
    layout: Layout = Layout.COLUMNS
    validate: bool = True
    """JSON Schema: validate each record against its writer schema (``<p>Validate``, Confluent's default)."""

    @property
    def decoded(self) -> bool:
        """Whether the payload is decoded (not ``binary``)."""
        return self.kind is not FormatKind.BINARY

    def subject_for(self, topic: str | None, strategy: SubjectStrategy) -> str:
        """The subject of the reader schema for ``topic``."""
        if self.subject:
            return self.subject
        name = f"{self.role}Subject"
        match strategy:
            case SubjectStrategy.TOPIC:
                if topic is None:
                    raise InvalidOptionError(
                        name,
                        None,
                        f"a subject: the query reads several topics, so '{self.role}Subject' or "
                        f"subjectNameStrategy=record with '{self.role}RecordName' chooses one reader schema",
                    )
                return f"{topic}-{self.role}"
            case SubjectStrategy.RECORD:
                return self._record(strategy)
            case SubjectStrategy.TOPIC_RECORD:
                if topic is None:
                    raise InvalidOptionError(name, None, "a subject: topic-record needs a single topic")
                return f"{topic}-{self._record(strategy)}"
        raise AssertionError(strategy)

    def _record(self, strategy: SubjectStrategy) -> str:
        if not self.record_name:
            raise InvalidOptionError(
                f"{self.role}RecordName",
                None,
                f"the record's full name with subjectNameStrategy={strategy.value}",
            )
        return self.record_name

    @classmethod
    def parse(cls, opts: Mapping[str, str], role: str) -> PayloadFormat:
        """The ``<role>*`` options."""
        kind = _enum(opts, f"{role}format", f"{role}Format", FormatKind, FormatKind.BINARY)
        assert isinstance(kind, FormatKind)
        inline = opts.get(f"{role}schema")
        schema_id = _positive(opts, f"{role}schemaid", f"{role}SchemaId")
        version = _positive(opts, f"{role}schemaversion", f"{role}SchemaVersion")
        layout = _enum(opts, f"{role}layout", f"{role}Layout", Layout, Layout.COLUMNS)
        assert isinstance(layout, Layout)
        given = [
            n
            for n, v in (
                (f"{role}Schema", inline),
                (f"{role}SchemaId", schema_id),
                (f"{role}SchemaVersion", version),
            )
            if v is not None
        ]
        if len(given) > 1:
            raise InvalidOptionError(
                given[1], "<set>", f"only one of {', '.join(given)} (they choose the same reader schema)"
            )
        if kind is FormatKind.BINARY:
            extra = [n for n in _PER_PAYLOAD if n not in ("format",) and f"{role}{n}" in opts]
            if extra:
                raise InvalidOptionError(
                    f"{role}Format",
                    "binary",
                    f"a decoding format (avro-confluent, avro, json-confluent, json, protobuf-confluent) "
                    f"when {role}{extra[0]} is set",
                )
        if kind.decoded_inline and (inline is None or not inline.strip()):
            raise InvalidOptionError(
                f"{role}Schema",
                None,
                f"the {kind.schema_type} schema of the {role}s with {role}Format={kind.value}",
            )
        if kind.decoded_inline and (schema_id or version):
            raise InvalidOptionError(
                f"{role}Format",
                kind.value,
                f"{kind.value}-confluent to use {given[0]} (no registry in plain {kind.value})",
            )
        record = opts.get(f"{role}recordname")
        if record is not None and not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", record.strip()):
            raise InvalidOptionError(
                f"{role}RecordName",
                record,
                "a record's (Protobuf: message's) full name such as com.example.Order",
            )
        validate = opts.get(f"{role}validate", "true").strip().lower()
        if validate not in ("true", "false"):
            raise InvalidOptionError(f"{role}Validate", validate, "true or false")
        if f"{role}validate" in opts and kind is not FormatKind.BINARY and kind.schema_type != "JSON":
            raise InvalidOptionError(
                f"{role}Validate",
                opts[f"{role}validate"],
                f"not set with {role}Format={kind.value}: "
                "only JSON Schema formats (json-confluent, json) validate",
            )
        subject = opts.get(f"{role}subject")
        if subject is not None and not subject.strip():
            raise InvalidOptionError(f"{role}Subject", subject, "a non-empty subject name")
        return cls(
            role=role,
            kind=kind,
            subject=subject.strip() if subject else None,
            record_name=record.strip() if record else None,
            inline_schema=inline,
            schema_id=schema_id,
            schema_version=version,
            layout=layout,
            validate=validate == "true",
        )


@dataclass(frozen=True, slots=True)
class RecordFormatOptions:
    """Key and value formats, the parse mode and the registry settings of one query."""

    key: PayloadFormat
    value: PayloadFormat
    registry: RegistryOptions | None = None
    strategy: SubjectStrategy = SubjectStrategy.TOPIC
    mode: ParseMode = ParseMode.FAILFAST
    corrupt_column: str = DEFAULT_CORRUPT_COLUMN
    key_prefix: str = DEFAULT_KEY_PREFIX
    auto_register: bool = False
    fail_on_new_fields: bool = False
    """``schemaEvolutionMode=fail``: a writer schema with fields the reader schema lacks stops the query."""

    @property
    def active(self) -> bool:
        """Whether anything is decoded."""
        return self.key.decoded or self.value.decoded

    @property
    def payloads(self) -> tuple[PayloadFormat, ...]:
        """The decoded payloads, key first."""
        return tuple(p for p in (self.key, self.value) if p.decoded)

    @classmethod
    def parse(
        cls, options: Mapping[str, str], mode_option: str = "mode", roles: tuple[str, ...] = ("key", "value")
    ) -> RecordFormatOptions:
        """Parse the format options out of ``options`` (any case); others are ignored.

        ``mode_option`` names the parse-mode option (``parseMode`` where the source has its own
        ``mode``); ``roles`` are the payloads the source has (Pravega events: ``value`` only).
        """
        opts = {k.lower(): v for k, v in options.items() if v is not None}
        for role in ("key", "value"):
            if role not in roles and any(k.startswith(role) and is_format_option(k) for k in opts):
                first = next(k for k in opts if k.startswith(role) and is_format_option(k))
                raise InvalidOptionError(first, opts[first], f"not set: this source has no {role} to decode")
        key, value = PayloadFormat.parse(opts, "key"), PayloadFormat.parse(opts, "value")
        strategy = _enum(
            opts, "subjectnamestrategy", "subjectNameStrategy", SubjectStrategy, SubjectStrategy.TOPIC
        )
        mode_name = "parseMode" if mode_option == "parsemode" else "mode"
        mode = _enum(opts, mode_option, mode_name, ParseMode, ParseMode.FAILFAST, upper=True)
        assert isinstance(strategy, SubjectStrategy) and isinstance(mode, ParseMode)
        uses_registry = [p for p in (key, value) if p.kind.uses_registry]
        registry = None
        if uses_registry:
            registry = RegistryOptions.parse(
                opts, f"{uses_registry[0].role}Format={uses_registry[0].kind.value}"
            )
        elif any(k.startswith(REGISTRY_PREFIX) for k in opts):
            first = next(k for k in opts if k.startswith(REGISTRY_PREFIX))
            raise InvalidOptionError(
                first,
                "<set>",
                "keyFormat or valueFormat avro-confluent, json-confluent or protobuf-confluent "
                "(nothing else uses the registry)",
            )
        if not (key.decoded or value.decoded):
            for name in (
                mode_option,
                "columnnameofcorruptrecord",
                "keyfieldsprefix",
                "subjectnamestrategy",
                "autoregisterschemas",
            ):
                if name in opts:
                    raise InvalidOptionError(
                        name, opts[name], "keyFormat or valueFormat set to a decoding format"
                    )
        evolution = opts.get("schemaevolutionmode", "keep").strip().lower()
        if evolution not in ("keep", "fail"):
            raise InvalidOptionError("schemaEvolutionMode", evolution, "keep or fail")
        auto = opts.get("autoregisterschemas", "false").strip().lower()
        if auto not in ("true", "false"):
            raise InvalidOptionError("autoRegisterSchemas", auto, "true or false")
        corrupt = opts.get("columnnameofcorruptrecord", DEFAULT_CORRUPT_COLUMN).strip()
        if not corrupt:
            raise InvalidOptionError("columnNameOfCorruptRecord", corrupt, "a column name")
        return cls(
            key=key,
            value=value,
            registry=registry,
            strategy=strategy,
            mode=mode,
            corrupt_column=corrupt,
            key_prefix=opts.get("keyfieldsprefix", DEFAULT_KEY_PREFIX),
            auto_register=auto == "true",
            fail_on_new_fields=evolution == "fail",
        )
