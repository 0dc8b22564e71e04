"""``compiled_class``: a payload decoder class of the compiled module (``native/kafka_reader``), if usable.

The module (``sparkflow_kafka_native``, the ``kafka-native`` extra) is optional: without it, or
with the decoder's environment switch set to ``python``, the pure decoders read everything.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["compiled_class"]


def compiled_class(name: str, switch: str | None) -> Any:
    """The module's class (or function) ``name``, or ``None`` (module absent or too old, or
    ``$switch=python``)."""
    if switch is not None and os.environ.get(switch, "").lower() == "python":
        return None
    try:
        import sparkflow_kafka_native  # type: ignore[import-not-found]
    except ImportError:
        return None
    return getattr(sparkflow_kafka_native, name, None)
