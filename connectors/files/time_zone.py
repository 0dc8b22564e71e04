"""The time zone in which ``jsonl`` and ``csv`` read timestamps written without an offset.

As Spark's JSON and CSV sources: the source's ``timeZone`` option, else the session's
``spark.sql.session.timeZone``. A Python data source is not handed the session's settings, but
Spark copies every setting the session has set into the job's local properties
(``SQLExecution.withSQLConfPropagated``), and a Python worker sees those of its task through
``TaskContext``; so the zone is looked up where the rows are read, in the task. A session that never
set the zone uses the JVM's default zone, which Java takes from the ``TZ`` variable or
``/etc/localtime``; the same sources are read here (a JVM started with ``-Duser.timezone`` is the
one case this cannot see).
"""

from __future__ import annotations

import os
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

SESSION_TIME_ZONE = "spark.sql.session.timeZone"
_OFFSET = re.compile(r"^[+-]\d\d:\d\d$")


def valid_time_zone(name: str) -> bool:
    """Whether ``name`` is a region (``America/New_York``), ``UTC`` or an offset (``+01:00``)."""
    if _OFFSET.match(name):
        return True
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def read_time_zone(option: str | None) -> str:
    """The zone naive timestamps are read in: ``option``, the session's, or the JVM's default."""
    if option:
        return option
    try:
        from pyspark import TaskContext

        context = TaskContext.get()
    except ImportError:  # pragma: no cover - pyspark is a dependency
        context = None
    if context is not None:
        zone = context.getLocalProperty(SESSION_TIME_ZONE)
        if zone and valid_time_zone(zone):
            return zone
    return _default_zone()


def _default_zone() -> str:
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and valid_time_zone(tz):
        return tz
    target = os.path.realpath("/etc/localtime")
    if "zoneinfo/" in target:
        name = target.split("zoneinfo/", 1)[1]
        if valid_time_zone(name):
            return name
    return "UTC"
