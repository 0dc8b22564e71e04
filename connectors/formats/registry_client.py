"""``RegistryClient``: schemas by id, by subject version and latest, from a Confluent-compatible registry.

A thin layer over confluent-kafka's ``SchemaRegistryClient`` (the ``kafka`` extra already carries
it; it does basic and bearer auth, TLS with client certificates, bounded retries with jittered
backoff on transport errors and 5xx/429, and caches schemas by id). This module adds what a
connector needs around it: ``schemaRegistry.*`` options (strings) turned into its typed config and
checked at ``load()``; one client per process and config (executors reuse it across tasks); and
errors that name the topic, partition and offset being decoded and the registry URL *without*
credentials, never the client's own message verbatim when it could echo a secret.

Threading: the wrapped client is thread-safe (its caches lock); this module keeps a process-wide
client cache guarded by a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from connector_base import ConnectorError, InvalidOptionError
from connector_base.redaction import redact_text
from connectors.formats.schema_references import self_contained

__all__ = [
    "REGISTRY_PREFIX",
    "RegistryClient",
    "RegistryOptions",
    "SchemaNotFoundError",
    "SchemaRegistryUnavailableError",
    "public_url",
]

REGISTRY_PREFIX = "schemaregistry."
"""Options ``schemaRegistry.<setting>`` (case-insensitive) are the registry client's settings."""

_NUMERIC = {
    "max.retries",
    "retries.wait.ms",
    "retries.max.wait.ms",
    "timeout",
    "cache.capacity",
    "cache.latest.ttl.sec",
}
_KNOWN = {
    "url",
    "basic.auth.user.info",
    "bearer.auth.credentials.source",
    "bearer.auth.token",
    "bearer.auth.logical.cluster",
    "bearer.auth.identity.pool.id",
    "bearer.auth.client.id",
    "bearer.auth.client.secret",
    "bearer.auth.scope",
    "bearer.auth.issuer.endpoint.url",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.disable.endpoint.verification",
    "proxy",
    *_NUMERIC,
}
DEFAULT_MAX_RETRIES = 3
DEFAULT_TIMEOUT_S = 30


class SchemaRegistryUnavailableError(ConnectorError):
    """The registry did not answer (after the client's bounded retries) or refused the credentials."""


class SchemaNotFoundError(ConnectorError):
    """The registry has no schema with that id, or no such subject or version."""


def public_url(url: str) -> str:
    """``url`` (first of a comma-separated list) without user info, for messages."""
    parts = urlsplit(url.split(",")[0].strip())
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass(frozen=True, slots=True)
class RegistryOptions:
    """The registry client's settings (``config`` may hold secrets: never logged, never in ``repr``)."""

    config: dict[str, Any] = field(repr=False)

    @property
    def url(self) -> str:
        """The registry URL without credentials."""
        return public_url(str(self.config["url"]))

    def __repr__(self) -> str:
        return f"RegistryOptions(url={self.url!r})"

    def key(self) -> tuple[tuple[str, str], ...]:
        """A hashable identity of the config (for the process-wide client cache)."""
        return tuple(sorted((k, str(v)) for k, v in self.config.items()))

    @classmethod
    def parse(cls, options: Mapping[str, str], required_by: str) -> RegistryOptions:
        """The ``schemaRegistry.*`` entries of ``options`` (lower-case keys).

        ``required_by`` names the format that needs the registry, for the missing-URL message.
        """
        conf: dict[str, Any] = {}
        for key, raw in options.items():
            if not key.startswith(REGISTRY_PREFIX):
                continue
            name = key[len(REGISTRY_PREFIX) :]
            option = f"schemaRegistry.{name}"
            if name not in _KNOWN:
                raise InvalidOptionError(
                    option, raw, "one of schemaRegistry." + ", schemaRegistry.".join(sorted(_KNOWN))
                )
            if name in _NUMERIC:
                try:
                    value = float(raw) if name == "timeout" else int(raw)
                except ValueError:
                    raise InvalidOptionError(option, raw, "a number") from None
                if value < 0:
                    raise InvalidOptionError(option, raw, "a number >= 0")
                conf[name] = value
            elif name == "ssl.disable.endpoint.verification":
                if raw.strip().lower() not in ("true", "false"):
                    raise InvalidOptionError(option, raw, "true or false")
                conf[name] = raw.strip().lower() == "true"
            else:
                conf[name] = raw
        url = str(conf.get("url", "")).strip()
        if not url:
            raise InvalidOptionError(
                "schemaRegistry.url", None, f"the registry's URL (http[s]://host:port) for {required_by}"
            )
        for one in url.split(","):
            if urlsplit(one.strip()).scheme not in ("http", "https"):
                raise InvalidOptionError(
                    "schemaRegistry.url", public_url(one), "http://host:port or https://host:port"
                )
        info = conf.get("basic.auth.user.info")
        if info is not None and ":" not in str(info):
            raise InvalidOptionError("schemaRegistry.basic.auth.user.info", info, "user:password")
        conf.setdefault("max.retries", DEFAULT_MAX_RETRIES)
        conf.setdefault("timeout", DEFAULT_TIMEOUT_S)
        # the client caches a subject's latest version for ever by default: every load() must see
        # the latest of its moment (a restarted query picks a new version up), so no latest cache
        conf.setdefault("cache.latest.ttl.sec", 0)
        if "bearer.auth.token" in conf:
            conf.setdefault("bearer.auth.credentials.source", "STATIC_TOKEN")
        if conf.get("bearer.auth.credentials.source") == "STATIC_TOKEN":
            # the client requires these with a static token even where the registry ignores them
            conf.setdefault("bearer.auth.logical.cluster", "")
            conf.setdefault("bearer.auth.identity.pool.id", "")
        parsed = cls(conf)
        parsed.check()
        return parsed

    def check(self) -> None:
        """Build the client once so that a bad combination fails at ``load()`` (the client checks)."""
        try:
            _build(self)
        except (ValueError, TypeError, OSError) as exc:
            raise InvalidOptionError(
                "schemaRegistry.*", None, redact_text(f"settings the registry client accepts: {exc}")
            ) from None


def _build(options: RegistryOptions) -> Any:
    from confluent_kafka.schema_registry import SchemaRegistryClient

    return SchemaRegistryClient(dict(options.config))


_CLIENTS: dict[tuple[tuple[str, str], ...], RegistryClient] = {}
_CLIENTS_LOCK = threading.Lock()


class RegistryClient:
    """Schemas from the registry; ``for_options`` shares one client per process and config."""

    def __init__(self, options: RegistryOptions) -> None:
        self.options = options
        self._client = _build(options)

    @classmethod
    def for_options(cls, options: RegistryOptions) -> RegistryClient:
        """The process's client for ``options``."""
        key = options.key()
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(key)
            if client is None:
                client = _CLIENTS[key] = cls(options)
            return client

    def _call(self, what: str, where: str, fn: Any, *args: Any) -> Any:
        from confluent_kafka.schema_registry.error import SchemaRegistryError

        try:
            return fn(*args)
        except SchemaRegistryError as exc:
            status = exc.http_status_code
            if status == 404:
                raise SchemaNotFoundError(
                    f"{where}: the schema registry at {self.options.url} has no {what}"
                ) from None
            if status in (401, 403):
                raise SchemaRegistryUnavailableError(
                    f"{where}: the schema registry at {self.options.url} refused the credentials "
                    f"(HTTP {status}) while fetching {what}; check schemaRegistry.basic.auth.user.info / "
                    "schemaRegistry.bearer.auth.*"
                ) from None
            raise SchemaRegistryUnavailableError(
                f"{where}: the schema registry at {self.options.url} answered HTTP {status} "
                f"(error code {exc.error_code}) while fetching {what}"
            ) from None
        except Exception as exc:  # transport errors (httpx), TLS errors: after the client's retries
            retries = self.options.config.get("max.retries", DEFAULT_MAX_RETRIES)
            raise SchemaRegistryUnavailableError(
                f"{where}: the schema registry at {self.options.url} is unreachable after {retries} retries "
                f"while fetching {what}: {type(exc).__name__}: {redact_text(str(exc))}"
            ) from None

    def schema_by_id(self, schema_id: int, where: str) -> tuple[str, str]:
        """``(schema text, schema type)`` of a registered id (cached by the client).

        An Avro or JSON Schema with references comes back self-contained (``schema_references.py``).
        """
        schema = self._call(f"schema id {schema_id}", where, self._client.get_schema, schema_id)
        return self._text(schema, where), schema.schema_type or "AVRO"

    def _text(self, schema: Any, where: str) -> str:
        """A fetched schema's text, with its Avro or JSON Schema references inlined."""
        kind = schema.schema_type or "AVRO"
        if kind.upper() == "PROTOBUF" or not schema.references:
            return str(schema.schema_str)
        references = self._referenced(list(schema.references), where, set())
        return self_contained(kind, schema.schema_str, references)

    def references(self, schema_id: int, where: str) -> list[tuple[str, str]]:
        """The schemas ``schema_id`` references (Protobuf imports): ``(name, text)``, dependencies first.

        (Avro and JSON Schema references are inlined into the schema's text instead.)
        """
        schema = self._call(f"schema id {schema_id}", where, self._client.get_schema, schema_id)
        return self._referenced(list(schema.references or []), where, set())

    def _referenced(self, refs: list[Any], where: str, seen: set[str]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for ref in refs:
            if ref.name in seen:
                continue
            seen.add(ref.name)
            reg = self._call(
                f"reference {ref.name!r} (version {ref.version} of subject {ref.subject!r})",
                where,
                self._client.get_version,
                ref.subject,
                ref.version,
            )
            out.extend(self._referenced(list(reg.schema.references or []), where, seen))
            out.append((ref.name, reg.schema.schema_str))
        return out

    def latest(self, subject: str, where: str) -> tuple[int, str, str]:
        """``(id, text, type)`` of a subject's latest version."""
        reg = self._call(f"subject {subject!r}", where, self._client.get_latest_version, subject)
        return int(reg.schema_id), self._text(reg.schema, where), reg.schema.schema_type or "AVRO"

    def version(self, subject: str, version: int, where: str) -> tuple[int, str, str]:
        """``(id, text, type)`` of one version of a subject."""
        reg = self._call(
            f"version {version} of subject {subject!r}", where, self._client.get_version, subject, version
        )
        return int(reg.schema_id), self._text(reg.schema, where), reg.schema.schema_type or "AVRO"

    def register(self, subject: str, text: str, schema_type: str, where: str) -> int:
        """Register ``text`` under ``subject`` (or find it registered); its id."""
        from confluent_kafka.schema_registry import Schema

        return int(
            self._call(
                f"registration under {subject!r}",
                where,
                self._client.register_schema,
                subject,
                Schema(text, schema_type),
            )
        )

    def lookup(self, subject: str, text: str, schema_type: str, where: str) -> int:
        """The id of ``text`` registered under ``subject`` (``SchemaNotFoundError`` if it is not)."""
        from confluent_kafka.schema_registry import Schema

        reg = self._call(
            f"schema under {subject!r}", where, self._client.lookup_schema, subject, Schema(text, schema_type)
        )
        return int(reg.schema_id)
