"""Compressed row-format files: the codecs Hadoop picks by file suffix, as Spark's file sources do.

``.gz`` / ``.gzip`` (gzip, also several members), ``.bz2`` (bzip2) and ``.deflate`` (a zlib
stream, Hadoop's ``DefaultCodec``) are decompressed whole with the standard library; such a file
cannot be cut into byte ranges, so it is one split. Hadoop's ``.lz4``, ``.snappy`` and ``.zst``
use Hadoop's own block framing (and native libraries), which no Python library reads; such files
are read as they are, as by a Spark without those codecs.
"""

from __future__ import annotations

import bz2
import gzip
import io
import zlib
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from connector_base import DataLossError

CODECS: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    ".gz": ("gzip", gzip.decompress),
    ".gzip": ("gzip", gzip.decompress),
    ".bz2": ("bzip2", bz2.decompress),
    ".deflate": ("deflate", zlib.decompress),
}
"""File suffix (lower case) -> codec name and whole-buffer decompression."""
COMPRESSED_SUFFIXES = tuple(CODECS)


def codec_of(path: str) -> str | None:
    """The codec of ``path`` by its suffix, or ``None`` for an uncompressed file."""
    lower = path.lower()
    return next((name for suffix, (name, _f) in CODECS.items() if lower.endswith(suffix)), None)


def _open(path: str, codec: str | None) -> BinaryIO:
    if codec == "gzip":
        return gzip.open(path, "rb")
    if codec == "bzip2":
        return bz2.open(path, "rb")
    if codec == "deflate":  # no streaming reader in the standard library; such files are rare
        with open(path, "rb") as f:
            return io.BytesIO(decompress(path, f.read()))
    return open(path, "rb")


def line_chunks(path: str, chunk_bytes: int, ignore_corrupt: bool = False) -> Iterator[tuple[int, bytes]]:
    """The (decompressed) content of ``path`` as ``(offset, bytes)`` chunks of about ``chunk_bytes``
    that end after a ``\\n`` (or at the end), so that no line is cut; memory stays one chunk.

    ``ignore_corrupt``: a compressed file is decompressed whole up to its first error
    (``decompress_readable``, ``ignoreCorruptFiles``), and no error is raised."""
    codec = codec_of(path)
    if ignore_corrupt and codec is not None:
        with open(path, "rb") as raw:
            data, _whole = decompress_readable(path, raw.read())
        at = 0
        while at < len(data):
            end = data.find(b"\n", at + chunk_bytes - 1)
            end = len(data) if end < 0 else end + 1
            yield at, data[at:end]
            at = end
        return
    offset, carry = 0, b""
    with _open(path, codec) as f:
        while True:
            try:
                block = f.read(chunk_bytes)
            except (OSError, EOFError, ValueError) as e:
                raise DataLossError(f"{codec} file {path} cannot be decompressed: {e}") from e
            if not block:
                break
            data = carry + block
            cut = data.rfind(b"\n") + 1
            if cut:
                yield offset, data[:cut]
                offset += cut
            carry = data[cut:]
    if carry:
        yield offset, carry


def decompress(path: str, raw: bytes) -> bytes:
    """The decompressed content of the file ``path``; ``DataLossError`` naming it when it is corrupt."""
    lower = path.lower()
    for suffix, (name, function) in CODECS.items():
        if lower.endswith(suffix):
            if not raw:
                return b""
            try:
                return function(raw)
            except (OSError, EOFError, ValueError, zlib.error) as e:
                raise DataLossError(f"{name} file {path} cannot be decompressed: {e}") from e
    return raw


_FEED_BYTES = 64 * 1024
"""Compressed bytes fed to a decompressor at a time by ``decompress_readable`` (what a failing
feed would have produced is lost, as a stream reader loses its last buffer)."""


def _decompressor(codec: str) -> Any:
    match codec:
        case "gzip":
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        case "bzip2":
            return bz2.BZ2Decompressor()
        case _:
            return zlib.decompressobj()


def decompress_readable(path: str, raw: bytes, whole_lines: bool = True) -> tuple[bytes, bool]:
    """What of the file ``path`` decompresses before its first error (``ignoreCorruptFiles``), and
    whether it all did. Cut to its last complete line when not (``whole_lines``), as a line reader
    that fails on the next read loses the line it was reading."""
    codec = codec_of(path)
    if codec is None or not raw:
        return raw, True
    out: list[bytes] = []
    rest = raw
    try:
        while rest:  # gzip and bzip2 files may hold several members
            d = _decompressor(codec)
            for at in range(0, len(rest), _FEED_BYTES):
                out.append(d.decompress(rest[at : at + _FEED_BYTES]))
                if d.eof:
                    break
            if not d.eof:
                raise EOFError("the compressed stream ends early")
            rest = d.unused_data if codec != "deflate" else b""
    except (OSError, EOFError, ValueError, zlib.error):
        data = b"".join(out)
        cut = max(data.rfind(b"\n"), data.rfind(b"\r")) + 1 if whole_lines else len(data)
        return data[:cut], False
    return b"".join(out), True
