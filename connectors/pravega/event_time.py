"""``EventTimeExtractor``: the event time (epoch ms) of a Pravega event, for ``eventTime.alignment=cut``.

Pravega events are opaque bytes with no time of their own, so the time comes from the payload, as
``eventTime.encoding`` says:

* ``json`` (default): ``eventTime.column`` names a top-level field of a JSON object, holding epoch
  milliseconds (a number) or an ISO-8601 string (a time without a zone is UTC);
* ``int64``: the event's first 8 bytes, a big-endian signed integer of epoch milliseconds
  (``eventTime.column`` must not be set).

An event whose time cannot be read fails the query (``MalformedRecordError`` naming the segment and
offset): the cut cannot place an event it cannot date.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import TypeVar

from connector_base import InvalidOptionError, MalformedRecordError

__all__ = [
    "CUT_FROM_OPTION",
    "CutFrom",
    "ENCODING_OPTION",
    "EventTimeEncoding",
    "EventTimeExtractor",
    "check_column",
    "cut_support",
    "parse_cut_from",
    "parse_encoding",
]

E = TypeVar("E", bound=Enum)
"""An option's enum."""

ENCODING_OPTION = "eventTime.encoding"
CUT_FROM_OPTION = "eventTime.cutFrom"
COLUMN_OPTION = "eventTime.column"
INT64_BYTES = 8
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


class EventTimeEncoding(Enum):
    """Where an event's time is in its payload."""

    JSON = "json"
    INT64 = "int64"


class CutFrom(Enum):
    """Where ``eventTime.alignment=cut`` takes its cut from."""

    EVENTS = "events"
    """The driver reads each event's time (``eventTime.encoding``, ``eventTime.column``)."""
    WATERMARKS = "watermarks"
    """The stream's watermarks (``_MARK<stream>``, written by Pravega's controller from the times
    its writers note): a batch ends at a watermark's stream cut."""


def _choice(options: Mapping[str, str], name: str, kind: type[E], default: E, valid: str) -> E:
    """Option ``name`` (matched case-insensitively) as a member of ``kind``; ``valid`` says what is."""
    raw = {k.lower(): v for k, v in options.items()}.get(name.lower())
    if raw is None:
        return default
    try:
        return kind(raw.strip().lower())
    except ValueError:
        raise InvalidOptionError(name, raw, valid) from None


def parse_cut_from(options: Mapping[str, str]) -> CutFrom:
    """``eventTime.cutFrom`` from the options (default ``events``)."""
    return _choice(
        options,
        CUT_FROM_OPTION,
        CutFrom,
        CutFrom.EVENTS,
        "events (the driver reads each event's time: eventTime.encoding / eventTime.column) or "
        "watermarks (the stream's Pravega watermarks, from writers that note time)",
    )


def parse_encoding(options: Mapping[str, str]) -> EventTimeEncoding:
    """``eventTime.encoding`` from the options (default ``json``)."""
    return _choice(
        options,
        ENCODING_OPTION,
        EventTimeEncoding,
        EventTimeEncoding.JSON,
        "json (eventTime.column names a top-level field of JSON events: epoch ms or ISO-8601) or "
        "int64 (each event's first 8 bytes, big-endian epoch ms)",
    )


def cut_support(encoding: EventTimeEncoding, column: str | None) -> str | None:
    """``None`` when the cut can read event times with these options, else what is valid instead."""
    if encoding is EventTimeEncoding.JSON and column is None:
        return (
            "off for format 'pravega' unless eventTime.column names the top-level field of the JSON "
            "events that holds their time (epoch ms or ISO-8601), or eventTime.encoding=int64 says "
            "each event starts with a big-endian int64 of epoch ms"
        )
    return None


def check_column(encoding: EventTimeEncoding, column: str | None) -> None:
    """``eventTime.column`` has no meaning with ``int64``: refuse it rather than ignore it."""
    if encoding is EventTimeEncoding.INT64 and column is not None:
        raise InvalidOptionError(
            COLUMN_OPTION,
            column,
            "no value with eventTime.encoding=int64 (the time is each event's first 8 bytes); "
            "use eventTime.encoding=json to read a JSON field",
        )


@dataclass(frozen=True, slots=True)
class EventTimeExtractor:
    """Reads the event time of payloads (see the module docstring)."""

    encoding: EventTimeEncoding
    column: str | None = None

    def __post_init__(self) -> None:
        check_column(self.encoding, self.column)
        reason = cut_support(self.encoding, self.column)
        if reason is not None:
            raise InvalidOptionError("eventTime.alignment", "cut", reason)

    def time_of(self, payload: bytes, where: str, offset: int) -> int:
        """The event time (epoch ms) of one payload; ``where``/``offset`` name it in errors."""
        if self.encoding is EventTimeEncoding.INT64:
            if len(payload) < INT64_BYTES:
                raise self._malformed(where, offset, f"it has {len(payload)} bytes, fewer than 8")
            return int.from_bytes(payload[:INT64_BYTES], "big", signed=True)
        try:
            value = json.loads(payload)
        except (ValueError, UnicodeDecodeError) as e:
            raise self._malformed(where, offset, f"it is not JSON ({e})") from None
        if not isinstance(value, dict) or self.column not in value:
            raise self._malformed(where, offset, f"it has no top-level field {self.column!r}")
        return self._ms(value[self.column], where, offset)

    def _ms(self, value: object, where: str, offset: int) -> int:
        if isinstance(value, bool):
            raise self._malformed(where, offset, f"its {self.column!r} is a boolean")
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return int(value // 1)
        if isinstance(value, str):
            try:
                parsed = datetime.fromisoformat(value.strip())
            except ValueError:
                raise self._malformed(where, offset, f"its {self.column!r} is {value!r}") from None
            aware = parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
            return (aware - _EPOCH) // _MS
        raise self._malformed(where, offset, f"its {self.column!r} is {value!r}")

    def _malformed(self, where: str, offset: int, why: str) -> MalformedRecordError:
        if self.encoding is EventTimeEncoding.INT64:
            expected = "each event to start with a big-endian int64 of epoch ms (eventTime.encoding=int64)"
        else:
            expected = (
                f"a JSON object whose field {self.column!r} (eventTime.column) holds epoch ms or an "
                "ISO-8601 time"
            )
        return MalformedRecordError(
            f"{where}: the event at offset {offset} has no event time for eventTime.alignment=cut: {why}; "
            f"expected {expected}"
        )
