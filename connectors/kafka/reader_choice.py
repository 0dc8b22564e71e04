"""``kafka.reader`` / ``kafka.writer``: compiled (``native``) or confluent-kafka (``python``) client path.

``kafka.reader`` picks the source's split reader at ``load()``, ``kafka.writer`` the sink's producing
path at ``save()``/``start()``. Both come from the same ``kafka-native`` wheel but are separate
options, so a user can pin one path without the other. ``auto`` (the default) takes the compiled
path where its module is installed and the confluent-kafka one elsewhere, so a machine without the
wheel (or without a compiler to build it) reads and writes as before. The environment variables
``SPARKFLOW_KAFKA_READER`` and ``SPARKFLOW_KAFKA_WRITER`` set the defaults for queries that do not
give the option (the test suite runs every Kafka test on both paths with them). Both paths have the
same semantics and output; see ``docs/kafka.md``.
"""

from __future__ import annotations

import importlib
import os
from enum import Enum
from typing import Any

from connector_base import InvalidOptionError

__all__ = [
    "DEFAULT_READER_ENV",
    "DEFAULT_WRITER_ENV",
    "INSTALL_HINT",
    "NATIVE_MODULE",
    "KafkaReader",
    "KafkaWriter",
    "native_module",
    "resolve_reader",
    "resolve_writer",
]

NATIVE_MODULE = "sparkflow_kafka_native"
DEFAULT_READER_ENV = "SPARKFLOW_KAFKA_READER"
DEFAULT_WRITER_ENV = "SPARKFLOW_KAFKA_WRITER"
INSTALL_HINT = (
    "install the compiled reader and writer with pip install 'sparkflow-connectors[kafka-native]' "
    "(a wheel of sparkflow-kafka-native for this platform, or one built from native/kafka_reader with "
    "'maturin build --release'), or set kafka.reader=python / kafka.writer=python"
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


class KafkaWriter(Enum):
    """The producing path a sink uses."""

    NATIVE = "native"
    PYTHON = "python"


def _native_chosen(raw: str | None, option: str, env: str, needs: str) -> bool:
    """Whether ``raw`` (``auto``, ``native`` or ``python``; ``None``: the variable ``env``, else ``auto``)
    means the compiled path here: the module installed, with the class ``needs`` (an older wheel of
    the module may predate it)."""
    from_env = raw is None
    value = (os.environ.get(env, "auto") if from_env else raw).strip().lower()
    name = env if from_env else option
    if value not in ("auto", "native", "python"):
        raise InvalidOptionError(name, value, "auto, native or python")
    if value == "python":
        return False
    module = native_module()
    installed = module is not None and hasattr(module, needs)
    if value == "native" and not installed:
        raise InvalidOptionError(
            name,
            value,
            f"'python' or 'auto' here: the module {NATIVE_MODULE} (with {needs}) is not installed; "
            + INSTALL_HINT,
        )
    return installed


def resolve_reader(raw: str | None) -> KafkaReader:
    """The reader for the option's value (``auto``, ``native`` or ``python``; default ``auto``)."""
    native = _native_chosen(raw, "kafka.reader", DEFAULT_READER_ENV, "NativeConsumer")
    return KafkaReader.NATIVE if native else KafkaReader.PYTHON


def resolve_writer(raw: str | None) -> KafkaWriter:
    """The sink's producing path for ``kafka.writer``'s value (``auto``, ``native`` or ``python``)."""
    native = _native_chosen(raw, "kafka.writer", DEFAULT_WRITER_ENV, "NativeProducer")
    return KafkaWriter.NATIVE if native else KafkaWriter.PYTHON
