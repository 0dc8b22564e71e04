"""Java Kafka client settings (``kafka.*`` options) to librdkafka settings, and secret redaction."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from connector_base import InvalidOptionError
from connectors.kafka.trust_store import trust_store_pem

__all__ = ["REDACTED", "is_secret", "redact", "translate_client_options", "REJECTED"]

REDACTED = "<redacted>"

_SECRET_PATTERN = re.compile(r"(password|secret|jaas|\.pem$|\.key$|token|credential)", re.IGNORECASE)


def is_secret(key: str) -> bool:
    """Whether a client setting (Java or librdkafka name) holds a secret."""
    return bool(_SECRET_PATTERN.search(key)) or key.lower().startswith(("sasl.oauthbearer.config",))


def redact(config: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``config`` with secret values replaced by ``<redacted>`` (for logs and errors)."""
    return {k: (REDACTED if is_secret(k) else v) for k, v in config.items()}


REJECTED: dict[str, str] = {
    "auto.offset.reset": "set the source option 'startingOffsets' instead",
    "enable.auto.commit": (
        "the source never auto-commits; use 'commitOffsetsToGroup' to commit processed offsets"
    ),
    "key.deserializer": "keys are always binary; use DataFrame operations (cast, from_json) to deserialize",
    "value.deserializer": (
        "values are always binary; use DataFrame operations (cast, from_json) to deserialize"
    ),
    "key.serializer": "the sink writes the binary 'key' column; serialize with DataFrame operations",
    "value.serializer": "the sink writes the binary 'value' column; serialize with DataFrame operations",
    "interceptor.classes": "Java interceptors cannot run in a Python client",
}
"""Client settings Spark's Kafka integration rejects, with what to do instead."""

_JAAS = re.compile(
    r"^\s*(?P<module>[\w.$]+)\s+(?P<flag>required|requisite|sufficient|optional)\s*(?P<args>.*?);?\s*$",
    re.DOTALL,
)
_JAAS_ARG = re.compile(r'(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|(\S+?))(?=\s|;|$)')
_LOGIN_MODULES = {
    "org.apache.kafka.common.security.plain.PlainLoginModule",
    "org.apache.kafka.common.security.scram.ScramLoginModule",
}

# Java name -> librdkafka name where they differ (same-named settings pass through unchanged)
_RENAMES = {
    "ssl.key.password": "ssl.key.password",
    "ssl.keystore.password": "ssl.keystore.password",
    "ssl.truststore.certificates": "ssl.ca.pem",
    "ssl.keystore.certificate.chain": "ssl.certificate.pem",
    "ssl.keystore.key": "ssl.key.pem",
    "client.id": "client.id",
}
_JAVA_ONLY = {
    "ssl.enabled.protocols",
    "ssl.protocol",
    "ssl.keymanager.algorithm",
    "ssl.trustmanager.algorithm",
    "ssl.secure.random.implementation",
    "ssl.provider",
    "ssl.engine.factory.class",
    "sasl.login.class",
    "sasl.client.callback.handler.class",
    "sasl.login.callback.handler.class",
    "security.providers",
}


def _parse_jaas(raw: str) -> dict[str, str]:
    m = _JAAS.match(raw)
    if m is None or m.group("module") not in _LOGIN_MODULES:
        raise InvalidOptionError(
            "kafka.sasl.jaas.config",
            REDACTED,
            '\'<LoginModule> required username="..." password="...";\' with PlainLoginModule or '
            "ScramLoginModule "
            "(for other mechanisms set librdkafka's sasl.* settings directly)",
        )
    args = {
        a.group(1): (a.group(2) if a.group(2) is not None else a.group(3))
        for a in _JAAS_ARG.finditer(m.group("args"))
    }
    if "username" not in args or "password" not in args:
        raise InvalidOptionError("kafka.sasl.jaas.config", REDACTED, 'both username="..." and password="..."')
    return {
        "sasl.username": args["username"].replace('\\"', '"'),
        "sasl.password": args["password"].replace('\\"', '"'),
    }


def translate_client_options(options: Mapping[str, str]) -> dict[str, str]:
    """The librdkafka settings for the ``kafka.*`` options (prefix removed, Java names translated).

    Raises ``InvalidOptionError`` for settings Spark rejects and Java-only settings that librdkafka
    cannot honour (secrets are never shown).
    """
    raw = {k[len("kafka.") :]: v for k, v in options.items() if k.lower().startswith("kafka.")}
    lowered = {k.lower(): k for k in raw}
    out: dict[str, str] = {}
    for key, value in raw.items():
        lk = key.lower()
        shown = REDACTED if is_secret(lk) else value
        if lk in REJECTED:
            raise InvalidOptionError(f"kafka.{key}", shown, f"not to be set: {REJECTED[lk]}")
        if lk in _JAVA_ONLY:
            raise InvalidOptionError(
                f"kafka.{key}", shown, "not set: librdkafka has no equivalent of this Java setting"
            )
        if lk == "sasl.jaas.config":
            out.update(_parse_jaas(value))
        elif lk == "ssl.truststore.type":
            if value.upper() not in ("JKS", "PKCS12", "PEM"):
                raise InvalidOptionError(f"kafka.{key}", value, "JKS, PKCS12 or PEM")
        elif lk == "ssl.keystore.type":
            if value.upper() not in ("PEM", "PKCS12"):
                raise InvalidOptionError(
                    f"kafka.{key}",
                    value,
                    "PEM or PKCS12 (librdkafka cannot read JKS stores; convert them to PEM)",
                )
        elif lk == "ssl.truststore.location":
            kind = raw.get(lowered.get("ssl.truststore.type", ""), "JKS").upper()
            if kind == "PEM":
                out["ssl.ca.location"] = value
            elif kind in ("JKS", "PKCS12"):
                # librdkafka reads neither: the certificates go to it as PEM text (trust_store.py)
                password = raw.get(lowered.get("ssl.truststore.password", ""))
                out["ssl.ca.pem"] = trust_store_pem(value, kind, password)
        elif lk == "ssl.truststore.password":
            continue  # used to open a JKS/PKCS12 trust store above; PEM ones have none
        elif lk == "ssl.keystore.location":
            kind = raw.get(lowered.get("ssl.keystore.type", ""), "JKS").upper()
            if kind == "PKCS12":
                out["ssl.keystore.location"] = value
            elif kind == "PEM":
                out["ssl.certificate.location"] = value
                out["ssl.key.location"] = value
            else:
                raise InvalidOptionError(
                    "kafka.ssl.keystore.location",
                    value,
                    "a PKCS12 or PEM key store with kafka.ssl.keystore.type set (librdkafka cannot read JKS)",
                )
        elif lk == "ssl.endpoint.identification.algorithm":
            out["ssl.endpoint.identification.algorithm"] = (
                "https" if value.strip().lower() == "https" else "none"
            )
        elif lk in _RENAMES:
            out[_RENAMES[lk]] = value
        else:
            out[key] = value
    return out
