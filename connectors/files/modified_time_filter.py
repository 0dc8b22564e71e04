"""``modifiedBefore`` / ``modifiedAfter``: files by modification time, as Spark's batch file sources.

Spark parses the option as a timestamp (``DateTimeUtils.stringToTimestamp``: ``yyyy``,
``yyyy-MM``, ``yyyy-MM-dd``, then ``T`` or a blank and ``HH``, ``HH:mm``, ``HH:mm:ss`` with up to
six fraction digits, optionally ``Z``, an offset or a zone), written without an offset in the
source's ``timeZone`` option or else the session's zone. It then compares that instant with the
file's modification time *shifted into the same zone* (``fromUTCTime``: the wall-clock time in
the zone, read as if it were UTC), strictly: ``modifiedBefore`` keeps files with a time before the
threshold, ``modifiedAfter`` those after it. Under UTC that is the plain comparison; elsewhere a
file's time counts the zone's offset twice, and this module does the same, so that both read the
same files. Spark's file stream source refuses both options; so does files-unified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

EXPECTED = (
    "a timestamp such as 2024-06-01T13:00:00 (yyyy[-MM[-dd[THH[:mm[:ss[.SSSSSS]]]]]], optionally "
    "ending in Z, an offset such as +01:00 or a zone such as America/New_York)"
)
_STAMP = re.compile(
    r"([+-]?\d{4,6})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ](\d{1,2})(?::(\d{1,2})(?::(\d{1,2})"
    r"(?:\.(\d*))?)?)?(.*))?)?)?"
)
_OFFSET = re.compile(r"(?:(?:UTC|GMT|UT)(?=[+-]|$))?(?:([+-])(\d{1,2})(?::?(\d\d))?(?::?(\d\d))?)?")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _zone(name: str) -> tzinfo:
    """A zone by name: ``Z``, ``UTC``, ``+01:00``, ``GMT+1``, or a region; ``ValueError`` if none."""
    text = name.strip()
    if text in ("Z", "z"):
        return UTC
    offset = _OFFSET.fullmatch(text)
    if offset and text:
        sign, hours, minutes, seconds = offset.groups()
        if sign is None:
            return UTC
        delta = timedelta(hours=int(hours), minutes=int(minutes or 0), seconds=int(seconds or 0))
        if delta > timedelta(hours=18):
            raise ValueError(f"offset {text} beyond 18 hours")
        return timezone(-delta if sign == "-" else delta)
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown zone {text!r}") from None


def parse_timestamp(text: str, zone: str) -> int:
    """Microseconds since the epoch of ``text`` read as Spark reads the option (a time without a
    zone is a wall-clock time in ``zone``); ``ValueError`` when it is no such timestamp."""
    match = _STAMP.fullmatch(text.strip())
    if not match:
        raise ValueError("not a timestamp")
    year, month, day, hour, minute, second, fraction, rest = match.groups()
    rest = (rest or "").strip()
    micros = int(((fraction or "") + "000000")[:6])
    try:
        local = datetime(
            int(year),
            int(month or 1),
            int(day or 1),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            micros,
        )
    except ValueError as e:
        raise ValueError(str(e)) from None
    at = local.replace(tzinfo=_zone(rest) if rest else _zone(zone))
    return (at - _EPOCH) // timedelta(microseconds=1)


def _wall_clock_micros(mtime_ms: int, zone: tzinfo) -> int:
    """Spark's ``fromUTCTime``: the file's time as a wall clock in ``zone`` shows it, read as UTC."""
    instant = _EPOCH + timedelta(milliseconds=mtime_ms)
    offset = instant.astimezone(zone).utcoffset() or timedelta(0)
    return (mtime_ms * 1000) + offset // timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class ModifiedTimeFilter:
    """The ``modifiedBefore`` / ``modifiedAfter`` options as written (checked when options are parsed)."""

    before: str | None = None
    after: str | None = None

    @property
    def active(self) -> bool:
        """Whether either option is set."""
        return self.before is not None or self.after is not None

    def accepts(self, mtime_ms: int, zone: str) -> bool:
        """Whether a file modified at ``mtime_ms`` is read, with naive thresholds in ``zone``."""
        local = _wall_clock_micros(mtime_ms, _zone(zone))
        if self.before is not None and not parse_timestamp(self.before, zone) - local > 0:
            return False
        return self.after is None or local - parse_timestamp(self.after, zone) > 0
