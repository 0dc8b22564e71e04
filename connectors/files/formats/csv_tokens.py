"""One CSV line split into fields exactly as Spark's ``csv`` source splits it (``multiLine=false``).

Spark parses every line with univocity-parsers' ``CsvParser`` configured from the source's options
(``CSVOptions.asParserSettings``). Its rules are not RFC 4180 and no Python library has them:

* the escape character (default ``\\``) escapes a quote or itself inside quotes only; elsewhere,
  and before any other character, it is kept (``back\\slash`` stays ``back\\slash``);
* a doubled quote inside quotes is one quote, but the quote after it is then "unescaped", and
  ``unescapedQuoteHandling`` (default ``STOP_AT_DELIMITER``) takes the whole value as written, quotes
  and all, up to the next delimiter: ``"a ""b""\"`` is the text ``"a ""b""\"``;
* whitespace after a closing quote is dropped before a delimiter and kept (with the quote) before
  anything else; a quoted value left open at the end of the line is its text without the quote;
* an empty unquoted field is ``nullValue``, an empty quoted one ``emptyValue``.

pyarrow's CSV reader (RFC 4180 with an optional escape that works everywhere) and Python's ``csv``
module cannot be configured to any of these, so this module follows the parser's state machine: the
same two characters of state (the current and the previous one), the same fast path for a quoted
value that ends at a delimiter, the same end-of-input handling. Every rule was checked against Spark
4 on random lines over ``a b , " \\ ' <space>`` with each option set (the files differential harness
keeps such cases). It is only used for lines that hold a quote character; the others go to pyarrow in
bulk (``CsvFormat``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

NUL = "\0"
BOM = "\ufeff"


def first_record(text: str) -> str:
    """The first record univocity's parser reads from an input: a byte-order mark at its start is
    dropped, and a record that was the mark alone reads as one NUL character (the parser's
    end-of-input character), so Spark's csv source gives the value ``"\x00"`` for it."""
    if text.startswith(BOM):
        return text[1:] or NUL
    return text


class UnescapedQuotes(Enum):
    """Spark's ``unescapedQuoteHandling``: what a quote inside a value that is not escaped does."""

    STOP_AT_DELIMITER = "STOP_AT_DELIMITER"
    STOP_AT_CLOSING_QUOTE = "STOP_AT_CLOSING_QUOTE"
    BACK_TO_DELIMITER = "BACK_TO_DELIMITER"
    SKIP_VALUE = "SKIP_VALUE"
    RAISE_ERROR = "RAISE_ERROR"


class UnescapedQuoteError(Exception):
    """A line with an unescaped quote under ``unescapedQuoteHandling=RAISE_ERROR`` (Spark fails the read)."""


@dataclass(frozen=True)
class Dialect:
    """The parser settings Spark derives from the csv options (``\\0`` is "none", as in Spark)."""

    sep: str = ","
    quote: str = '"'
    escape: str = "\\"
    escape_escape: str | None = None
    """``charToEscapeQuoteEscaping``; unset: the escape itself, or none when escape and quote are one."""
    null_value: str = ""
    empty_value: str = ""
    ignore_leading: bool = False
    ignore_trailing: bool = False
    unescaped: UnescapedQuotes = UnescapedQuotes.STOP_AT_DELIMITER

    @property
    def escape_of_escape(self) -> str:
        """The character that escapes the escape inside quotes (``\\0``: none)."""
        if self.escape_escape is not None:
            return self.escape_escape
        return NUL if self.escape == self.quote else self.escape


class _End(Exception):
    """The end of the line (univocity's ``EOFException``)."""


def _stops(*chars: str) -> re.Pattern[str]:
    return re.compile("[" + "".join(re.escape(c) for c in dict.fromkeys(chars)) + "]")


class Tokenizer:
    """Splits lines for one ``Dialect``; ``fields(line)`` is the list Spark's parser hands on."""

    def __init__(self, dialect: Dialect) -> None:
        d = dialect
        self.d = d
        self.sep, self.quote, self.esc, self.esc_esc = d.sep, d.quote, d.escape, d.escape_of_escape
        self.mode = d.unescaped
        self.until_delimiter = self.mode in (
            UnescapedQuotes.STOP_AT_DELIMITER,
            UnescapedQuotes.SKIP_VALUE,
            UnescapedQuotes.BACK_TO_DELIMITER,
        )
        self._in_quotes = _stops(self.quote, self.esc, self.esc_esc)
        self._to_sep = _stops(self.sep)
        self._reset("")

    # -- input and output, as the parser sees them ------------------------------------------------

    def _reset(self, line: str) -> None:
        self.s, self.i, self.n = line, 0, len(line)
        self.ch, self.prev = NUL, NUL
        self.buf: list[str] = []
        self.trim = False
        self.unescaped = False
        self.skipped = False
        self.out: list[str | None] = []
        self.open_quote = False

    def _next(self) -> str:
        if self.i >= self.n:
            raise _End
        c = self.s[self.i]
        self.i += 1
        return c

    def _append_until(self, ch: str, stops: re.Pattern[str]) -> str:
        """Append ``ch`` and what follows up to a stop character, which is returned (not appended)."""
        if stops.match(ch):
            return ch
        self.buf.append(ch)
        m = stops.search(self.s, self.i)
        if m is None:
            self.buf.append(self.s[self.i :])
            self.i = self.n
            raise _End
        self.buf.append(self.s[self.i : m.start()])
        self.i = m.start() + 1
        return m.group()

    def _value(self, value: str | None = None) -> None:
        if self.skipped:  # what follows a skipped value's quote is dropped with it: the value is null
            self.buf = []
        elif value is None:
            text = "".join(self.buf)
            self.buf = []
            if self.trim:
                text = _rstrip(text)
            value = text if text else self.d.empty_value  # univocity's appender holds emptyValue
        self.skipped = False
        self.out.append(value)

    def _empty(self) -> None:
        self.out.append(self.d.null_value)

    # -- the record -------------------------------------------------------------------------------

    def ends_open(self, line: str) -> bool:
        """Whether ``line`` ends inside a quoted value (``multiLine``: the record goes on past the
        line break), as the parser reads it."""
        self.fields(line)  # a quote just read closes the value: the line break after it ends the record
        return self.open_quote and self.i >= self.n and self.prev != self.quote

    def fields(self, line: str) -> list[str | None]:
        """The fields of ``line`` (no line separator in it): ``nullValue`` for an empty field,
        ``None`` for a value skipped (``unescapedQuoteHandling=SKIP_VALUE``)."""
        if not line:
            return []
        self._reset(line)
        try:
            self.ch = self._next()
            self._record()
        except _End:
            self._end_of_line()
        return self.out

    def _skip_whitespace(self) -> None:
        while self.ch <= " " and self.ch not in (self.sep, self.quote):
            self.ch = self._next()

    def _record(self) -> None:
        d = self.d
        if d.ignore_leading and self.ch <= " ":
            self._skip_whitespace()
        while True:  # a line has no newline: the loop ends at the end of the input
            if d.ignore_leading and self.ch <= " ":
                self._skip_whitespace()
            if self.ch == self.sep:
                self._empty()
            else:
                self.unescaped = False
                self.prev = NUL
                if self.ch == self.quote:
                    if not self.buf:
                        value = self._quoted_fast()
                        if value is not None:
                            self._value(d.empty_value if value == "" else value)
                            self.ch = self._next()  # the delimiter
                            if self.i >= self.n:  # the line ends with the delimiter: a last empty field
                                self._empty()
                                return
                            self.ch = self._next()
                            continue
                    self.trim = False
                    self._quoted()
                    if not (
                        self.unescaped and self.mode is UnescapedQuotes.BACK_TO_DELIMITER and not self.buf
                    ):
                        self._value()
                else:
                    self._unquoted()
            self.ch = self._next()

    def _unquoted(self) -> None:
        m = self._to_sep.search(self.s, self.i)
        if m is None:  # runs to the end of the line: appended, then the end of input is met
            self.trim = self.d.ignore_trailing
            self.buf.append(self.ch)
            self.buf.append(self.s[self.i :])
            self.i = self.n
            raise _End
        text = self.ch + self.s[self.i : m.start()]
        if self.d.ignore_trailing:
            text = _rstrip(text)
        self.i = m.start() + 1
        self.ch = self.sep
        self._value(text if text else self.d.null_value)

    def _quoted_fast(self) -> str | None:
        """A quoted value whose closing quote is followed by the delimiter, without escapes in it
        (the parser's shortcut); ``None`` when the general path must read it."""
        s, q, e, ee = self.s, self.quote, self.esc, self.esc_esc
        j = self.i
        while True:
            if j >= self.n:
                return None
            c = s[j]
            if c == q:
                if s[j - 1] == e:
                    return None
                if j + 1 < self.n and s[j + 1] == self.sep:
                    break
                return None
            if c == e and j + 1 < self.n and s[j + 1] in (q, ee):
                return None
            j += 1
        value = s[self.i : j]
        self.i = j + 1
        return value

    def _quoted(self) -> None:
        if self.prev != NUL and self.until_delimiter:
            if self.mode is UnescapedQuotes.SKIP_VALUE:
                self._skip_value()
                return
            self.buf.insert(0, self.quote)
            self.ch = self._next()
            self.trim = self.d.ignore_trailing
            self.ch = self._append_until(self.ch, self._to_sep)
            return
        q, e = self.quote, self.esc
        self.open_quote = True
        self.ch = self._next()
        while True:
            ch = self.ch
            if self.prev == q and (ch <= " " or ch == self.sep):
                break
            if ch != q and ch != e:
                if self.prev == q:  # an unescaped quote
                    self.open_quote = False
                    self._unescaped_quote()
                    return
                if self.prev == e and e != NUL:
                    self.buf.append(e)
                self.ch = self._append_until(ch, self._in_quotes)
                self.prev = self.ch
                self.ch = self._next()
            else:
                self._quote_or_escape()
                if self.unescaped or self.skipped:
                    self.open_quote = False
                self.prev = self.ch
                self.ch = self._next()
                if self.unescaped and self.ch == self.sep:
                    return
        self.open_quote = False
        if self.ch != self.sep and self.ch <= " ":  # whitespace after the closing quote
            spaces = []
            while True:
                spaces.append(self.ch)
                self.ch = self._next()
                if not self.ch <= " ":
                    break
            if self.ch != self.sep and self.mode is not UnescapedQuotes.RAISE_ERROR:
                self.buf.append(q)
                self.buf.extend(spaces)
                if self.until_delimiter or (self.ch != q and self.ch != e):
                    self.buf.append(self.ch)
                self.prev = self.ch
                self._quoted()
        if self.ch != self.sep:
            raise UnescapedQuoteError(f"unexpected character {self.ch!r} after a quoted value")

    def _quote_or_escape(self) -> None:
        ch, prev, q, e, ee = self.ch, self.prev, self.quote, self.esc, self.esc_esc
        if ch == e and prev == ee and ee != NUL:
            self.buf.append(e)
            self.ch = NUL
        elif prev == e:
            if ch == q:
                self.buf.append(q)
                self.ch = NUL
            else:
                self.buf.append(prev)
        elif ch == q and prev == q:
            self.buf.append(q)
        elif prev == q:
            self._unescaped_quote_in_value()

    def _unescaped_quote(self) -> None:
        self.unescaped = True
        mode = self.mode
        if mode is UnescapedQuotes.BACK_TO_DELIMITER:
            text = "".join(self.buf)
            while (pos := text.find(self.sep)) != -1:
                self._value(text[:pos])
                text = text[pos + 1 :]
            self.buf = [text, self.ch] if text else [self.ch]
            self.prev = NUL
            self._quoted()
        elif mode in (UnescapedQuotes.STOP_AT_CLOSING_QUOTE, UnescapedQuotes.STOP_AT_DELIMITER):
            self.buf.append(self.quote)
            self.buf.append(self.ch)
            self.prev = self.ch
            self._quoted()
        else:
            self._skip_or_raise()

    def _unescaped_quote_in_value(self) -> None:
        if self.mode is UnescapedQuotes.SKIP_VALUE or self.mode is UnescapedQuotes.RAISE_ERROR:
            self._skip_or_raise()
            return
        self.buf.append(self.quote)
        self.prev = self.ch
        self._value_with_escapes()

    def _value_with_escapes(self) -> None:
        q, e = self.quote, self.esc
        while self.ch != self.sep:
            if self.ch != q and self.ch != e:
                if self.prev == q:
                    self._unescaped_quote_in_value()
                    return
                self.buf.append(self.ch)
            else:
                self._quote_or_escape()
            self.prev = self.ch
            self.ch = self._next()

    def _skip_or_raise(self) -> None:
        if self.mode is UnescapedQuotes.RAISE_ERROR:
            raise UnescapedQuoteError(
                f"unescaped quote character {self.quote!r} inside a value "
                "(unescapedQuoteHandling=RAISE_ERROR)"
            )
        self._skip_value()

    def _skip_value(self) -> None:
        self.buf = []
        self.skipped = True
        if self.ch == self.sep:
            return
        m = self._to_sep.search(self.s, self.i)
        if m is None:
            self.i = self.n
            raise _End
        self.i = m.start() + 1
        self.ch = self.sep

    def _end_of_line(self) -> None:
        consume = False
        if self.ch == self.quote:
            if self.prev == self.quote:
                consume = True
            elif not self.unescaped:
                self.buf.append(self.quote)
        if not consume:
            consume = self.prev != NUL and self.ch != self.sep
        if self.out or consume:
            if self.buf or consume:
                self._value()
            else:
                self._empty()
        elif self.buf:
            self._value()
        else:
            self._empty()


def _rstrip(text: str) -> str:
    end = len(text)
    while end and text[end - 1] <= " ":
        end -= 1
    return text[:end]
