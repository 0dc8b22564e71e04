"""Secret redaction for every message a connector builds: by option name and by value shape.

An option's value is shown in an error only when neither its name nor its value looks like a
secret. Names are matched loosely (``passwd``, ``awsSecretKey``, ``sasl.jaas.config`` under any
prefix), and values are checked for what secrets look like (a JAAS line, a PEM key, an AWS key,
a token, a URL with a password, a long random string), so a secret under a misspelled or
another vendor's option name is hidden too.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

__all__ = ["REDACTED", "is_secret_name", "looks_like_secret", "redact_options", "redact_text", "shown_value"]

REDACTED = "<redacted>"

_SECRET_NAME = re.compile(
    r"pass(word|wd|phrase)?(?![a-z])|pwd|secret|token|jaas|credential|private|"
    r"api[._-]?key|access[._-]?key|auth(?!ority)|signature|\.pem$|\.key$|keytab|bearer|sasl\.oauthbearer\.config",
    re.IGNORECASE,
)
_SECRET_ASSIGNMENT = re.compile(
    r"(?P<name>[\w.-]*(pass(word|wd|phrase)?|pwd|secret|token|credential|api[._-]?key|access[._-]?key)[\w.-]*)"
    r"(?P<sep>[\"']?\s*[=:]\s*)(?P<value>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|[^\s,;&\"'}]+)",
    re.IGNORECASE,
)
_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)", re.DOTALL)
_URL_USERINFO = re.compile(
    r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^/\s:@]*):(?P<pw>[^/\s@]+)@", re.IGNORECASE
)
_AWS_ACCESS_KEY = re.compile(r"\b(AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}\b")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9+/=_\-]{20,}")
_MIN_ENTROPY_BITS = 4.0
"""Bits per character above which a 20+ character run of token characters is taken for a key.

Random base64 of 20 to 40 characters measures 4.0 to 5.0; words and identifiers with a few
digits and capitals (``orders_2024_EventsStream``) measure 3.0 to 3.9. A run that follows ``/`` or
``:``, starts with ``/`` or has a plain lower-case directory name is a path and stays.
"""


def is_secret_name(name: str) -> bool:
    """Whether an option or setting called ``name`` holds a secret (any prefix, any vendor)."""
    return bool(_SECRET_NAME.search(name))


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _random_run(run: str) -> bool:
    classes = sum(bool(re.search(p, run)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    return classes >= 3 and _entropy(run) >= _MIN_ENTROPY_BITS


def looks_like_secret(value: object) -> bool:
    """Whether ``value`` is shaped like a secret, whatever option it came under."""
    if not isinstance(value, str):
        return False
    return redact_text(value) != value


def redact_text(text: str) -> str:
    """``text`` with every secret-shaped part replaced by ``<redacted>`` (for free-form messages)."""
    out = _PEM.sub(REDACTED, text)
    out = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", out)
    out = _SECRET_ASSIGNMENT.sub(lambda m: f"{m['name']}{m['sep']}{REDACTED}", out)
    out = _JWT.sub(REDACTED, out)
    out = _AWS_ACCESS_KEY.sub(REDACTED, out)
    return _TOKEN_CHARS.sub(_token_run, out)


def _token_run(m: re.Match[str]) -> str:
    before = m.string[m.start() - 1] if m.start() > 0 else ""
    run = m[0]
    if (before and before in "/:") or run.startswith("/") or not _random_run(run):
        return run
    if "/" in run and any(re.fullmatch(r"[a-z]{2,}", part) for part in run.split("/")):
        return run  # a relative path with a plain directory name
    return REDACTED
    return REDACTED


def shown_value(name: str, value: object) -> object:
    """``value`` as a message may show it under option ``name``: whole when harmless, else redacted."""
    if value is None:
        return None
    if is_secret_name(name):
        return REDACTED
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, (list, tuple)):
        return type(value)(shown_value(name, v) for v in value)
    return value


def redact_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``options`` safe to log or print."""
    return {k: shown_value(k, v) for k, v in options.items()}
