"""The JSON that Spark's json source reads beyond the standard: its parser's ``allow...`` options.

Spark's parser is Jackson, configured by the source's options (``JSONOptions``):

* ``allowSingleQuotes`` (default true; ``ALLOW_SINGLE_QUOTES``): ``'names'`` and ``'strings'``,
  inside which ``\\'`` is a quote and ``"`` a character;
* ``allowComments`` (false; ``ALLOW_COMMENTS``): ``/* ... */`` and ``// ...`` comments;
* ``allowUnquotedFieldNames`` (false; ``ALLOW_UNQUOTED_FIELD_NAMES``): ``{id: 1}``, names of
  letters, digits, ``_`` and ``$``;
* ``allowNumericLeadingZeros`` (false; ``ALLOW_NUMERIC_LEADING_ZEROS``): ``007`` is 7;
* ``allowBackslashEscapingAnyCharacter`` (false; ``ALLOW_BACKSLASH_ESCAPING_ANY_CHARACTER``):
  ``"\\q"`` is ``"q"``;
* ``allowUnquotedControlChars`` (false; ``ALLOW_UNQUOTED_CONTROL_CHARS``): a raw tab or other
  control character inside a string;
* ``allowNonNumericNumbers`` (true; ``ALLOW_NON_NUMERIC_NUMBERS``): ``NaN``, ``Infinity``,
  ``-Infinity`` (which Python's ``json`` reads too) and ``+Infinity``, ``+INF``, ``-INF`` (written
  here as the former); ``false`` makes a line holding one of them malformed (``non_numeric_token``).

Neither pyarrow's reader nor Python's ``json`` has these features, and no maintained Python JSON
library has all of them with positions (``json5`` parses a different dialect and gives values, not
where they were written). So a line (or document) that the parsers refuse is written again here as
standard JSON, keeping for each character the index in the text it comes from, and parsed once
more: the cost falls on such lines only. A value that a string column takes as its text as written
is sliced from the original through that map, comments and quotes included, as Spark's. A line that
is still malformed keeps its own text as its corrupt-record text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["NON_NUMERIC_BYTES", "Leniency", "Written", "non_numeric_token", "normalized", "parse_leniently"]

T = TypeVar("T")

_FAILED = (ValueError, StopIteration, IndexError, RecursionError)
"""What the JSON parsers here raise for text they refuse."""
_ESCAPES = frozenset('"\\/bfnrtu')
_TOKEN_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[+-]?(?:NaN|Infinity|INF)\b')
NON_NUMERIC_BYTES = re.compile(rb"NaN|Infinity|INF")
"""Bytes that may hold a non-numeric number (a cheap test before ``non_numeric_token``)."""
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
_NUMBER_CHARS = frozenset("0123456789+-.eE")


@dataclass(frozen=True, slots=True)
class Leniency:
    """The ``allow...`` options of a json read (see the module docstring)."""

    single_quotes: bool = True
    comments: bool = False
    unquoted_names: bool = False
    leading_zeros: bool = False
    any_escape: bool = False
    control_chars: bool = False
    non_numeric: bool = True


class _Text:
    """The standard JSON being written, with the source index of each character."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.where: list[int] = []
        self.changed = False

    def put(self, text: str, at: int) -> None:
        self.parts.append(text)
        self.where.extend([at] * len(text))


def normalized(text: str, lenient: Leniency) -> tuple[str, list[int]] | None:
    """``text`` as standard JSON where ``lenient`` allows what it holds, and for each character of
    the result (and its end) the index in ``text`` it comes from; ``None`` when nothing needed
    rewriting or a string or comment is left open (the text stays malformed)."""
    out = _Text()
    stack: list[str] = []
    expect_name = False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"' or (c == "'" and lenient.single_quotes):
            end = _string(text, i, c, lenient, out)
            if end < 0:
                return None
            i, expect_name = end, False
        elif c == "/" and lenient.comments and text[i + 1 : i + 2] in ("*", "/"):
            end = text.find("*/", i + 2) + 2 if text[i + 1] == "*" else _line_end(text, i)
            if end < 2:
                return None
            out.put(" ", i)
            out.changed = True
            i = end
        elif c in "{[":
            stack.append(c)
            out.put(c, i)
            i, expect_name = i + 1, c == "{"
        elif c in "}]":
            if stack:
                stack.pop()
            out.put(c, i)
            i, expect_name = i + 1, False
        elif c == ",":
            out.put(c, i)
            i, expect_name = i + 1, bool(stack) and stack[-1] == "{"
        elif expect_name and lenient.unquoted_names and c in _NAME_CHARS:
            j = i
            while j < n and text[j] in _NAME_CHARS:
                j += 1
            out.put('"', i)
            for k in range(i, j):
                out.put(text[k], k)
            out.put('"', j - 1)
            out.changed = True
            i, expect_name = j, False
        elif c in "+-" and lenient.non_numeric and (word := _infinity(text, i)):
            out.put("-Infinity" if c == "-" else "Infinity", i)
            out.changed = True
            i, expect_name = i + len(word), False
        elif c in "-0123456789":
            i = _number(text, i, lenient, out)
            expect_name = False
        else:
            out.put(c, i)
            i += 1
    if not out.changed:
        return None
    out.where.append(n)
    return "".join(out.parts), out.where


def _infinity(text: str, i: int) -> str:
    """``+Infinity``, ``+INF`` or ``-INF`` at ``text[i]`` (``-Infinity`` is JSON to Python), or ``""``."""
    for word in ("+Infinity", "+INF", "-INF"):
        if text.startswith(word, i) and not text[i + len(word) : i + len(word) + 1].isalnum():
            return word
    return ""


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _string(text: str, i: int, quote: str, lenient: Leniency, out: _Text) -> int:
    """Write the string starting at ``text[i]`` as a JSON string; the index after it, or -1 when it
    is left open."""
    out.put('"', i)
    out.changed = out.changed or quote == "'"
    j, n = i + 1, len(text)
    while j < n:
        ch = text[j]
        if ch == quote:
            out.put('"', j)
            return j + 1
        if ch == "\\":
            if j + 1 >= n:
                return -1
            nxt = text[j + 1]
            if nxt in _ESCAPES:
                out.put(text[j : j + 2], j)
            elif (nxt == "'" and lenient.single_quotes) or lenient.any_escape:
                out.put(nxt, j)  # not " or \\: those are JSON escapes, copied above
                out.changed = True
            else:
                out.put(text[j : j + 2], j)  # stays malformed
            j += 2
            continue
        if ch == '"':  # inside single quotes, a character
            out.put('\\"', j)
        elif ch < " " and lenient.control_chars:
            out.put(f"\\u{ord(ch):04x}", j)
            out.changed = True
        else:
            out.put(ch, j)
        j += 1
    return -1


def _number(text: str, i: int, lenient: Leniency, out: _Text) -> int:
    """Write the number starting at ``text[i]`` (leading zeros dropped when allowed); the index after it."""
    j, n = i, len(text)
    while j < n and text[j] in _NUMBER_CHARS:
        j += 1
    start = i + 1 if text[i] == "-" else i
    digits_end = start
    while digits_end < j and text[digits_end].isdigit():
        digits_end += 1
    drop = 0
    if lenient.leading_zeros:
        while start + drop < digits_end - 1 and text[start + drop] == "0":
            drop += 1
    for k in range(i, j):
        if not start <= k < start + drop:  # the first digit kept stands for the zeros dropped
            out.put(text[k], start if drop and k == start + drop else k)
    out.changed = out.changed or drop > 0
    return j


Written = Callable[[int, int], str]
"""The text as written of ``[start, end)`` of the text a parser reads."""


def non_numeric_token(text: str) -> str | None:
    """The first ``NaN``, ``Infinity`` or ``INF`` token (signed or not) outside strings, or ``None``."""
    for m in _TOKEN_OR_STRING.finditer(text):
        if m.group()[0] not in "\"'":
            return m.group()
    return None


def parse_leniently(parse: Callable[[str, Written], T | None], text: str, lenient: Leniency) -> T | None:
    """``parse(text, written)``, and when it refuses the text (raises, or gives ``None``), ``parse``
    of the text normalized (when ``lenient`` allows anything it holds), ``written`` giving back the
    original text of what it slices; the first refusal stands when that does not help. Without
    ``non_numeric``, text holding a ``NaN`` or ``Infinity`` token is refused first."""
    if not lenient.non_numeric and (token := non_numeric_token(text)) is not None:
        raise ValueError(f"{token} is not a number (allowNonNumericNumbers=false)")
    failure: BaseException | None = None
    try:
        result = parse(text, lambda start, end: text[start:end])
        if result is not None:
            return result
    except _FAILED as e:
        failure = e
    again = normalized(text, lenient)
    if again is not None:
        json_text, where = again
        try:
            result = parse(json_text, lambda start, end: text[where[start] : where[end]])
            if result is not None:
                return result
        except _FAILED:
            pass
    if failure is not None:
        raise failure
    return None
