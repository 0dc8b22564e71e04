"""``failure_message``: a failed streaming query's error with its cause first.

Spark wraps an error raised in a Python worker as ``[PYTHON_EXCEPTION] An exception was thrown from
the Python worker: Traceback ...``, and pytest's one-line summary (all CI shows of a failure) stops
at the traceback's first line. The message built here puts the last ``...Error: ...`` line of the
Python traceback (the connector's own error) in that first line, and the whole text after it. The
summary also cuts that line after about 100 characters, so a chain of wrappers on it
(``connector_base.errors.ReaderFailedError: a split fetcher failed: ConnectorError: ...``) is cut down
to its innermost error.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["failure_message"]

_ERROR_LINE = re.compile(r"^\s*[A-Za-z_][\w.]*(Error|Exception|Failure)\b:? ?.*$")
_WRAPPED = re.compile(r"\b([A-Za-z_]\w*(?:Error|Exception|Failure)): ")


def failure_message(query: Any, context: str = "") -> str | None:
    """``None`` while ``query`` runs or ended cleanly; else ``query failed<context>: <cause> | <error>``."""
    error = query.exception()
    if error is None:
        return None
    text = str(error)
    causes = [line.strip() for line in text.splitlines() if _ERROR_LINE.match(line)]
    cause = causes[-1] if causes else text.splitlines()[0] if text else type(error).__name__
    wrapped = list(_WRAPPED.finditer(cause))
    if wrapped:
        cause = cause[wrapped[-1].start() :]  # the innermost error, its class name unqualified
    return f"query failed{context}: {cause[:400]} | {text}"
