"""``kafka.reader``: which split reader fetches (``native``, compiled, or ``python``), chosen at ``load()``.

``auto`` (the default) takes the compiled reader where its module is installed and the
confluent-kafka one elsewhere, so a machine without the ``kafka-native`` wheel (or without a
compiler to build it) reads as before. The environment variable ``SPARKFLOW_KAFKA_READER`` sets the
default for queries that do not give the option (the test suite runs every Kafka test on both
readers with it). Both readers have the same semantics and output; see ``docs/kafka.md``.
"""

from __future__ import annotations

import importlib
import os
from enum import Enum
from typing import Any

from connector_base import InvalidOptionError

__all__ = [
    "DEFAULT_READER_ENV",
    "INSTALL_HINT",
    "NATIVE_MODULE",
    "KafkaReader",
    "native_module",
    "resolve_reader",
]

NATIVE_MODULE = "sparkflow_kafka_native"
DEFAULT_READER_ENV = "SPARKFLOW_KAFKA_READER"
INSTALL_HINT = (
    "install the compiled reader with pip install 'sparkflow-connectors[kafka-native]' (a wheel of "
    "sparkflow-kafka-native for this platform, or one built from native/kafka_reader with "
    "'maturin build --release'), or set kafka.reader=python"
)


class KafkaReader(Enum):
    """The split reader a query uses."""

    NATIVE = "native"
    PYTHON = "python"


def native_module() -> Any:
    """The compiled module, or ``None`` where it is not installed (or cannot load here)."""
    try:
        return importlib.import_module(NATIVE_MODULE)
    except ImportError:
        return None


def resolve_reader(raw: str | None) -> KafkaReader:
    """The reader for the option's value (``auto``, ``native`` or ``python``; default ``auto``)."""
    from_env = raw is None
    value = (os.environ.get(DEFAULT_READER_ENV, "auto") if from_env else raw).strip().lower()
    name = DEFAULT_READER_ENV if from_env else "kafka.reader"
    if value not in ("auto", "native", "python"):
        raise InvalidOptionError(name, value, "auto, native or python")
    if value == "python":
        return KafkaReader.PYTHON
    installed = native_module() is not None
    if value == "native" and not installed:
        raise InvalidOptionError(
            name,
            value,
            f"'python' or 'auto' here: the module {NATIVE_MODULE} is not installed; {INSTALL_HINT}",
        )
    return KafkaReader.NATIVE if installed else KafkaReader.PYTHON
