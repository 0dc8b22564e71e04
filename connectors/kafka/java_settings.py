"""Java Kafka client settings users carry over from Spark, and what each becomes in librdkafka.

``JAVA_SETTINGS`` goes through the Java consumer, producer and common client settings
(``ConsumerConfig``, ``ProducerConfig``, ``CommonClientConfigs``, Kafka 4.1) one by one:
each is passed on under the same name, renamed (with its value converted where the units
differ), used by the connector itself, or refused with the reason and what to set instead.
Security settings (``security.*``, ``ssl.*``, ``sasl.*``) are :mod:`client_config`'s business.
Settings that are not Java names (librdkafka's own) pass on unchanged; :func:`check_librdkafka`
then asks librdkafka itself, so an unknown name fails at ``load()``, not when the query runs.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from connector_base import InvalidOptionError
from connector_base.client_pool import config_key
from connectors.kafka.client_config import REDACTED, is_secret

__all__ = ["JAVA_SETTINGS", "Handling", "JavaSetting", "check_librdkafka", "translate_java_settings"]


class Handling(Enum):
    """What happens to a Java setting."""

    SAME = "same name in librdkafka"
    RENAMED = "renamed"
    CONNECTOR = "used by the connector"
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class JavaSetting:
    """One Java client setting: how it is handled, its librdkafka name, or why it is refused."""

    handling: Handling
    target: str | None = None
    convert: Callable[[str, str], str] | None = None
    reason: str = ""


def _same() -> JavaSetting:
    return JavaSetting(Handling.SAME)


def _rename(target: str, convert: Callable[[str, str], str] | None = None) -> JavaSetting:
    return JavaSetting(Handling.RENAMED, target, convert)


def _refuse(reason: str) -> JavaSetting:
    return JavaSetting(Handling.REFUSED, reason=reason)


def _int(name: str, raw: str) -> int:
    try:
        return int(raw.strip())
    except ValueError:
        raise InvalidOptionError(f"kafka.{name}", raw, "an integer") from None


def _buffer_bytes(name: str, raw: str) -> str:
    value = _int(name, raw)
    return "0" if value == -1 else str(value)  # Java's -1 (the OS default) is librdkafka's 0


def _kbytes(name: str, raw: str) -> str:
    return str(max(1, math.ceil(_int(name, raw) / 1024)))


_PARTITIONERS = {
    # Java's default: murmur2 of the key, sticky batches for null keys
    "org.apache.kafka.clients.producer.internals.defaultpartitioner": "murmur2_random",
    "org.apache.kafka.clients.producer.uniformstickypartitioner": "random",
}


def _partitioner(name: str, raw: str) -> str:
    found = _PARTITIONERS.get(raw.strip().lower())
    if found is None:
        raise InvalidOptionError(
            f"kafka.{name}",
            raw,
            "DefaultPartitioner or UniformStickyPartitioner (Java partitioner classes cannot run in "
            "librdkafka; choose partitions with the sink's 'partition' column, or set librdkafka's "
            "kafka.partitioner)",
        )
    return found


def _ignore_keys(name: str, raw: str) -> str:
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise InvalidOptionError(f"kafka.{name}", raw, "true or false")
    return "random" if value == "true" else "murmur2_random"


_ASSIGNORS = {
    "org.apache.kafka.clients.consumer.rangeassignor": "range",
    "org.apache.kafka.clients.consumer.roundrobinassignor": "roundrobin",
    "org.apache.kafka.clients.consumer.cooperativestickyassignor": "cooperative-sticky",
}


def _assignors(name: str, raw: str) -> str:
    out = []
    for cls in (c.strip() for c in raw.split(",") if c.strip()):
        if cls.lower() in _ASSIGNORS.values():
            out.append(cls.lower())
        elif cls.lower() in _ASSIGNORS:
            out.append(_ASSIGNORS[cls.lower()])
        else:
            raise InvalidOptionError(
                f"kafka.{name}", raw, "RangeAssignor, RoundRobinAssignor or CooperativeStickyAssignor"
            )
    return ",".join(out)


_METRICS = "Java client metrics; librdkafka reports statistics through kafka.statistics.interval.ms"
_NO_BLOCK = "the sink waits for room in librdkafka's queue; bound delivery with kafka.delivery.timeout.ms"

JAVA_SETTINGS: dict[str, JavaSetting] = {
    # --- common -------------------------------------------------------------------------------
    "bootstrap.servers": _same(),
    "client.id": _same(),
    "client.rack": _same(),
    "client.dns.lookup": _same(),
    "metadata.max.age.ms": _same(),
    "reconnect.backoff.ms": _same(),
    "reconnect.backoff.max.ms": _same(),
    "retry.backoff.ms": _same(),
    "retry.backoff.max.ms": _same(),
    "connections.max.idle.ms": _same(),
    "socket.connection.setup.timeout.ms": _same(),
    "enable.metrics.push": _same(),
    "metadata.recovery.strategy": _same(),
    "metadata.recovery.rebootstrap.trigger.ms": _same(),
    "send.buffer.bytes": _rename("socket.send.buffer.bytes", _buffer_bytes),
    "receive.buffer.bytes": _rename("socket.receive.buffer.bytes", _buffer_bytes),
    "request.timeout.ms": _rename("socket.timeout.ms"),
    "default.api.timeout.ms": JavaSetting(Handling.CONNECTOR),
    "socket.connection.setup.timeout.max.ms": _refuse(
        "librdkafka has one connection setup timeout: set kafka.socket.connection.setup.timeout.ms"
    ),
    "metadata.max.idle.ms": _refuse("librdkafka keeps metadata by kafka.metadata.max.age.ms"),
    "metrics.sample.window.ms": _refuse(_METRICS),
    "metrics.num.samples": _refuse(_METRICS),
    "metrics.recording.level": _refuse(_METRICS),
    "metric.reporters": _refuse(_METRICS),
    "auto.include.jmx.reporter": _refuse(_METRICS),
    "config.providers": _refuse("Java config providers cannot run here; pass the values as options"),
    # --- consumer -----------------------------------------------------------------------------
    "group.id": _same(),
    "group.instance.id": _same(),
    "group.protocol": _same(),
    "group.remote.assignor": _same(),
    "session.timeout.ms": _same(),
    "heartbeat.interval.ms": _same(),
    "max.poll.interval.ms": _same(),
    "auto.commit.interval.ms": _same(),
    "allow.auto.create.topics": _same(),
    "isolation.level": _same(),
    "fetch.min.bytes": _same(),
    "fetch.max.bytes": _same(),
    "max.partition.fetch.bytes": _same(),
    "check.crcs": _same(),
    "max.poll.records": _same(),
    "fetch.max.wait.ms": _rename("fetch.wait.max.ms"),
    "partition.assignment.strategy": _rename("partition.assignment.strategy", _assignors),
    "exclude.internal.topics": _refuse(
        "the source never lists internal topics (names starting with '__'); use assign to read one"
    ),
    # --- producer -----------------------------------------------------------------------------
    "acks": _same(),
    "batch.size": _same(),
    "linger.ms": _same(),
    "delivery.timeout.ms": _same(),
    "compression.type": _same(),
    "max.in.flight.requests.per.connection": _same(),
    "retries": _same(),
    "enable.idempotence": _same(),
    "transaction.timeout.ms": _same(),
    "max.request.size": _rename("message.max.bytes"),
    "buffer.memory": _rename("queue.buffering.max.kbytes", _kbytes),
    "compression.gzip.level": _rename("compression.level"),
    "compression.lz4.level": _rename("compression.level"),
    "compression.zstd.level": _rename("compression.level"),
    "partitioner.class": _rename("partitioner", _partitioner),
    "partitioner.ignore.keys": _rename("partitioner", _ignore_keys),
    "partitioner.adaptive.partitioning.enable": _refuse(
        "librdkafka has no adaptive partitioning; kafka.sticky.partitioning.linger.ms tunes null-key batches"
    ),
    "partitioner.availability.timeout.ms": _refuse("librdkafka has no adaptive partitioning"),
    "max.block.ms": _refuse(_NO_BLOCK),
    "transactional.id": _refuse(
        "the sink is at-least-once and does not write in transactions (as Spark's Kafka sink)"
    ),
}
"""Every Java consumer, producer and common client setting outside security, by lower-case name."""


def translate_java_settings(options: Mapping[str, str]) -> dict[str, str]:
    """``options`` with Java ``kafka.*`` names turned into librdkafka ones (other options unchanged).

    ``options`` has lower-case names. Raises ``InvalidOptionError`` for refused settings and for a
    Java setting given together with the librdkafka setting it becomes.
    """
    out: dict[str, str] = {}
    origin: dict[str, str] = {}
    for key, value in options.items():
        if not key.startswith("kafka."):
            out[key] = value
            continue
        name = key[len("kafka.") :]
        setting = JAVA_SETTINGS.get(name)
        if setting is None or setting.handling in (Handling.SAME, Handling.CONNECTOR):
            target = key
        elif setting.handling is Handling.REFUSED:
            raise InvalidOptionError(key, value, f"not set: {setting.reason}")
        else:
            assert setting.target is not None
            target = f"kafka.{setting.target}"
            value = setting.convert(name, value) if setting.convert else value
        if target in out and origin.get(target) != key:
            raise InvalidOptionError(
                key, value, f"not set together with {origin[target]}, which it also sets"
            )
        out[target] = value
        origin[target] = key
    return out


_PROPERTY = re.compile(r'"([^"]+)"')
_ALIASES = {  # librdkafka reports these aliases by their canonical names
    "queue.buffering.max.ms": "linger.ms",
    "message.send.max.retries": "retries",
    "request.required.acks": "acks",
    "message.timeout.ms": "delivery.timeout.ms",
    "max.in.flight.requests.per.connection": "max.in.flight",
}


_CHECKED: set[bytes] = set()
"""Digests of the configurations librdkafka accepted in this process (a digest: no secret is kept)."""


def _digest(config: Mapping[str, Any], producer: bool) -> bytes:
    """The configuration as the client pools key it (``config_key``), hashed, with the client kind."""
    return hashlib.sha256(f"{producer}:{config_key(config)}".encode()).digest()


def check_librdkafka(config: Mapping[str, Any], producer: bool) -> None:
    """Let librdkafka check ``config`` (no connection is made): unknown names and bad values fail here.

    Each check makes and closes a client, ~1.8 ms: a configuration accepted once is not checked
    again in the same process. Every read task parses the options the driver checked at ``load()``,
    and a micro-batch of six partitions paid six checks.
    """
    from confluent_kafka import Consumer, KafkaException, Producer

    digest = _digest(config, producer)
    if digest in _CHECKED:
        return
    conf = {k: v for k, v in config.items() if k != "bootstrap.servers"}
    conf["log_level"] = 0
    try:
        if producer:
            Producer(conf)
        else:
            conf.setdefault("group.id", "config-check")
            Consumer(conf).close()
    except KafkaException as e:
        err = e.args[0]
        text = err.str() if hasattr(err, "str") else str(err)
        m = _PROPERTY.search(text)
        name = m.group(1) if m else "*"
        name = _ALIASES.get(name, name) if name not in config else name
        shown = REDACTED if is_secret(name) else config.get(name)
        if is_secret(name):
            text = "librdkafka refused the value"  # its message may quote the value
        text = text.strip()
        raise InvalidOptionError(
            f"kafka.{name}",
            shown,
            f"a setting librdkafka knows with a valid value ({text}); Java-only settings are listed "
            "in docs/kafka.md",
        ) from None
    _CHECKED.add(digest)
