"""The charsets of ``encoding`` / ``charset`` (json, csv) and ``lineSep`` (text), as Spark names them."""

from __future__ import annotations

import codecs

UTF8 = "utf-8"
CHARSETS = ("iso-8859-1", "us-ascii", "utf-16", "utf-16be", "utf-16le", "utf-32", "utf-8")
"""The charsets Spark 4's json and csv sources take (``INVALID_PARAMETER_VALUE.CHARSET`` otherwise),
compared without case."""
_PYTHON_CODEC = {"iso-8859-1": "latin-1", "us-ascii": "ascii", "utf-16": "utf-16-be", "utf-32": "utf-32-be"}
"""Java's name -> Python's codec (``UTF-16`` / ``UTF-32`` without a byte-order mark: big-endian)."""
BOMS = {
    "utf-16": (codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE),
    "utf-32": (codecs.BOM_UTF32_BE, codecs.BOM_UTF32_LE),
}
"""The byte-order marks Java's ``UTF-16`` / ``UTF-32`` decoders read (either byte order)."""


def python_codec(charset: str) -> str:
    """The Python codec of a charset name (Spark's names, or any Python knows for the text source)."""
    low = charset.lower()
    return _PYTHON_CODEC.get(low, low)


def encode_separator(separator: str, charset: str) -> bytes:
    """``lineSep``'s bytes as Java's ``String.getBytes(charset)`` gives them (``UTF-16``: a big-endian
    byte-order mark first, as Java writes it)."""
    low = charset.lower()
    if low == "utf-16":
        return codecs.BOM_UTF16_BE + separator.encode("utf-16-be")
    return separator.encode(python_codec(low), "replace")
