"""``LineFraming``: where a row format's lines end (``lineSep``) and how their bytes decode (``encoding``).

Spark reads text, json and csv files with Hadoop's line reader: by default a line ends at ``\\n``,
``\\r\\n`` or a lone ``\\r``; with ``lineSep`` it ends at that string's bytes in the file's charset
(found left to right, never overlapping), and a ``\\n`` or ``\\r`` inside a line is part of it.
Each line's bytes are then decoded on their own: json and csv with ``encoding`` (Java's decoders:
``UTF-16`` / ``UTF-32`` big-endian unless the line starts with a byte-order mark), text never (its
values are the raw bytes, as UTF-8). Default framing in UTF-8 takes the bulk paths of the formats;
any other framing reads each file whole and parses its lines one by one (``custom``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from connectors.files.charsets import BOMS, UTF8, encode_separator, python_codec

__all__ = ["CARRIAGE_RETURN", "NEWLINE", "UTF8", "LineFraming", "line_bounds"]

if TYPE_CHECKING:
    from connectors.files.options import FileSourceOptions
NEWLINE = 10
CARRIAGE_RETURN = 13


def _terminators(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the bytes that end a line (``\\n``, or a ``\\r`` not followed by ``\\n``), and
    which of them are the ``\\n`` of a ``\\r\\n``."""
    nl = buf == NEWLINE
    cr = buf == CARRIAGE_RETURN
    if not cr.any():
        term = np.flatnonzero(nl)
        return term, np.zeros(len(term), bool)
    lone = cr.copy()
    lone[:-1] &= ~nl[1:]
    term = np.flatnonzero(nl | lone)
    crlf = np.zeros(len(term), bool)
    at = term[term > 0]
    crlf[term > 0] = nl[at] & cr[at - 1]
    return term, crlf


def line_bounds(data: bytes | memoryview) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (without the separator) of every line; no empty line after a final separator.

    Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``, as Hadoop's ``LineRecordReader`` (so Spark's
    text, json and csv sources) ends them.
    """
    buf = np.frombuffer(data, np.uint8)
    term, crlf = _terminators(buf)
    starts = np.concatenate((np.zeros(1, np.int64), term + 1))
    ends = np.concatenate((term - crlf, np.array([len(buf)], np.int64)))
    if len(buf) == 0 or buf[-1] in (NEWLINE, CARRIAGE_RETURN):
        starts, ends = starts[:-1], ends[:-1]
    return starts, ends


@dataclass(frozen=True, slots=True)
class LineFraming:
    """Where lines end (``separator``: ``None`` for Hadoop's default) and their charset."""

    separator: bytes | None = None
    charset: str = UTF8

    @classmethod
    def of(cls, options: FileSourceOptions) -> LineFraming:
        """The framing ``options`` ask for (text: ``encoding`` only encodes ``lineSep``)."""
        sep = None if options.line_sep is None else encode_separator(options.line_sep, options.charset)
        text = options.format.value == "text"
        return cls(sep, UTF8 if text else options.charset)

    @property
    def custom(self) -> bool:
        """Whether lines need this framing (a ``lineSep``, or a charset other than UTF-8)."""
        return self.separator is not None or self.charset.lower() != UTF8

    def bounds(self, data: bytes | memoryview) -> tuple[np.ndarray, np.ndarray]:
        """Start and end (without the separator) of every line; no empty line after a final separator."""
        if self.separator is None:
            return line_bounds(data)
        raw = bytes(data)
        starts: list[int] = []
        ends: list[int] = []
        at, sep = 0, self.separator
        while at < len(raw):
            k = raw.find(sep, at)
            starts.append(at)
            if k < 0:
                ends.append(len(raw))
                break
            ends.append(k)
            at = k + len(sep)
        return np.asarray(starts, np.int64), np.asarray(ends, np.int64)

    def lines(self, data: bytes | memoryview) -> list[tuple[int, bytes]]:
        """Every line of ``data`` with its start."""
        raw = bytes(data)
        starts, ends = self.bounds(raw)
        return [(s, raw[s:e]) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]

    def whole_lines_end(self, data: bytes) -> int:
        """Where the last line that ends with a separator ends (what is left of a file whose read failed:
        a line cut short is lost, as by Hadoop's reader)."""
        if self.separator is None:
            return max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
        starts, ends = self.bounds(data)
        ended = ends[ends < len(data)]  # lines followed by a separator
        return int(ended[-1]) + len(self.separator) if len(ended) else 0

    def decode(self, line: bytes) -> str:
        """A line's text; raises ``UnicodeDecodeError`` on bytes that are not of the charset."""
        low = self.charset.lower()
        for bom in BOMS.get(low, ()):
            if line.startswith(bom):
                return line.decode(low)  # Python's utf-16 / utf-32 read the mark
        return line.decode(python_codec(low))

    def to_utf8(self, line: bytes, strict: bool) -> bytes | None:
        """A line's bytes as UTF-8: invalid bytes become U+FFFD, or (``strict``) give ``None``."""
        if self.charset.lower() == UTF8:
            return line
        try:
            return self.decode(line).encode(UTF8, "surrogatepass")
        except UnicodeDecodeError:
            if strict:
                return None
            low = self.charset.lower()
            return line.decode(python_codec(low), "replace").encode(UTF8, "surrogatepass")
