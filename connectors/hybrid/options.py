"""Options of ``format("hybrid")``, parsed once into a frozen ``HybridOptions``."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connector_base import InvalidOptionError
from connector_base.hybrid import SwitchStart, SwitchStartKind
from connector_base.spark import parse_duration_ms

__all__ = [
    "EVENT_TIME_COLUMN",
    "SOURCES",
    "SWITCH_OVERLAP",
    "SWITCH_START",
    "SWITCH_TIMESTAMP",
    "TIMESTAMP_STARTS",
    "HybridOptions",
    "data_source_class",
]

SOURCES = "sources"
EVENT_TIME_COLUMN = "hybrid.eventTimeColumn"
SWITCH_OVERLAP = "hybrid.switchOverlap"
SWITCH_START = "hybrid.switchStart"
SWITCH_TIMESTAMP = "hybrid.switchTimestamp"
QUERY_PREFIXES = ("backlog.", "eventtime.")
"""Options of the whole query that the bridge reads (backlog sizing, event time), not a source's."""
OWN_OPTIONS = (SOURCES, EVENT_TIME_COLUMN, SWITCH_OVERLAP, SWITCH_START, SWITCH_TIMESTAMP, "arrowBatchRows")

TIMESTAMP_STARTS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "kafka-unified": (
        ("startingOffsets", "startingTimestamp", "startingOffsetsByTimestamp"),
        {"startingTimestamp": "{ms}", "startingOffsetsByTimestampStrategy": "latest"},
    ),
    "kinesis-unified": (
        ("startingPosition", "startingTimestamp"),
        {"startingPosition": "AT_TIMESTAMP", "startingTimestamp": "{ms}"},
    ),
}
"""Formats a stage can start at a timestamp in: (their own starting options, the options set for ``ms``).

Kafka uses ``startingOffsetsByTimestampStrategy=latest``: a partition with no record at or after the
timestamp yet starts at its end, where records from then on arrive.
"""


def data_source_class(fmt: str) -> Any:
    """The ``DataSource`` class registered as ``fmt`` (by its ``pyspark_<name>`` module)."""
    module_name = "pyspark_" + fmt.replace("-", "_")
    valid = "format names with a pyspark_<name> module (files-unified, kafka-unified, ...)"
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise InvalidOptionError(SOURCES, fmt, valid) from None
    cls = getattr(module, "DefaultSource", None)
    if cls is None or cls.name() != fmt:
        raise InvalidOptionError(SOURCES, fmt, valid)
    return cls


def _lookup(options: Mapping[str, str], key: str) -> str | None:
    for k, v in options.items():
        if k.lower() == key.lower():
            return v
    return None


@dataclass(frozen=True, slots=True)
class HybridOptions:
    """The stages (format names and their own options) and how each next stage starts."""

    formats: tuple[str, ...]
    child_options: tuple[dict[str, str], ...]
    switch_start: SwitchStart

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> HybridOptions:
        """Parse and validate; raises ``InvalidOptionError`` naming the option, value and valid choices."""
        raw = _lookup(options, SOURCES)
        if raw is None or not raw.strip():
            raise InvalidOptionError(SOURCES, raw, "two or more format names, the bounded ones first")
        formats = tuple(f.strip() for f in raw.split(","))
        if len(formats) < 2 or any(not f for f in formats):
            raise InvalidOptionError(SOURCES, raw, "two or more comma-separated format names")
        if len(set(formats)) != len(formats) or "hybrid" in formats:
            raise InvalidOptionError(SOURCES, raw, "distinct format names other than hybrid")
        for fmt in formats:
            data_source_class(fmt)
        children: list[dict[str, str]] = [{} for _ in formats]
        own = {o.lower() for o in OWN_OPTIONS}
        for key, value in options.items():
            if key.lower() in own or key.lower().startswith(QUERY_PREFIXES):
                continue
            prefix, _dot, rest = key.partition(".")
            if rest and prefix in formats:
                children[formats.index(prefix)][rest] = value
                continue
            raise InvalidOptionError(
                key,
                value,
                f"one of {', '.join(OWN_OPTIONS)}, or an option of a source prefixed by its format "
                f"name ({formats[0]}.<option>); load(path) is not used: give {formats[0]}.path",
            )
        return cls(formats, tuple(children), cls._switch_start(options, formats, children))

    @staticmethod
    def _switch_start(
        options: Mapping[str, str], formats: tuple[str, ...], children: list[dict[str, str]]
    ) -> SwitchStart:
        column = _lookup(options, EVENT_TIME_COLUMN)
        kind_raw = _lookup(options, SWITCH_START) or ("derived" if column else "configured")
        try:
            kind = SwitchStartKind(kind_raw.strip().lower())
        except ValueError:
            raise InvalidOptionError(SWITCH_START, kind_raw, "derived, timestamp or configured") from None
        overlap = parse_duration_ms(options, SWITCH_OVERLAP)
        if overlap is not None and kind is not SwitchStartKind.DERIVED:
            raise InvalidOptionError(
                SWITCH_OVERLAP, _lookup(options, SWITCH_OVERLAP), f"only with {SWITCH_START}=derived"
            )
        ts_raw = _lookup(options, SWITCH_TIMESTAMP)
        if ts_raw is not None and kind is not SwitchStartKind.TIMESTAMP:
            raise InvalidOptionError(SWITCH_TIMESTAMP, ts_raw, f"only with {SWITCH_START}=timestamp")
        match kind:
            case SwitchStartKind.CONFIGURED:
                return SwitchStart.configured()
            case SwitchStartKind.DERIVED:
                if not column or not column.strip():
                    raise InvalidOptionError(
                        EVENT_TIME_COLUMN, column, f"a column of the schema when {SWITCH_START}=derived"
                    )
                start = SwitchStart.derived(column.strip(), overlap or 0)
            case _:
                if ts_raw is None or not ts_raw.strip().isdigit():
                    raise InvalidOptionError(
                        SWITCH_TIMESTAMP,
                        ts_raw,
                        f"milliseconds since the epoch when {SWITCH_START}=timestamp",
                    )
                start = SwitchStart.timestamp(int(ts_raw.strip()))
        for fmt, child in zip(formats[1:], children[1:], strict=True):
            if fmt not in TIMESTAMP_STARTS:
                raise InvalidOptionError(
                    SWITCH_START,
                    kind.value,
                    f"configured: {fmt} cannot start at a timestamp (only {', '.join(TIMESTAMP_STARTS)} can)",
                )
            own_starts = {s.lower(): s for s in TIMESTAMP_STARTS[fmt][0]}
            for key, value in child.items():
                if key.lower() in own_starts:
                    name = f"{fmt}.{own_starts[key.lower()]}"
                    raise InvalidOptionError(
                        name,
                        value,
                        f"unset: {SWITCH_START}={kind.value} decides where {fmt} starts "
                        f"(or set {SWITCH_START}=configured to use {name})",
                    )
        return start

    def timestamp_options(self, stage: int, ms: int) -> dict[str, str]:
        """The options that make stage ``stage`` start at ``ms``."""
        _own, settings = TIMESTAMP_STARTS[self.formats[stage]]
        return {k: v.format(ms=ms) for k, v in settings.items()}
