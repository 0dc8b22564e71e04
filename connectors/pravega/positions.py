"""Stream cuts: their text form, and the start/end positions a query resolves on the driver.

A stream cut maps every segment that covers the key space at one point of a stream to a byte
offset in it. The connector's text form (accepted in options, printed in logs and docs)::

    <scope>/<stream>:<segment id>=<offset>[,<segment id>=<offset>...][;<scope>/<stream>:...]

for example ``shop/orders:0=1200,4294967297=0``. Segment ids are Pravega's 64-bit ids
(``epoch << 32 | number``). ``earliest`` is the head (the truncation point), ``latest`` the tails
of the current segments; both are resolved once, on the driver, into concrete offsets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from connector_base import InvalidOptionError

__all__ = ["CutKind", "StreamCutSpec", "StreamId", "format_stream_cut", "parse_stream_cut"]

StreamId = tuple[str, str]
"""``(scope, stream)``."""


class CutKind(Enum):
    """How a start or end position is given."""

    EARLIEST = "earliest"
    LATEST = "latest"
    UNBOUNDED = "unbounded"
    EXPLICIT = "explicit"


@dataclass(frozen=True, slots=True)
class StreamCutSpec:
    """A start or end position: symbolic, or explicit offsets per stream."""

    kind: CutKind
    cuts: Mapping[StreamId, Mapping[int, int]] = field(default_factory=dict)

    @classmethod
    def earliest(cls) -> StreamCutSpec:
        """The head of every stream."""
        return cls(CutKind.EARLIEST)

    @classmethod
    def latest(cls) -> StreamCutSpec:
        """The tail of every stream when the query starts."""
        return cls(CutKind.LATEST)

    @classmethod
    def unbounded(cls) -> StreamCutSpec:
        """No end."""
        return cls(CutKind.UNBOUNDED)

    @classmethod
    def explicit(cls, cuts: Mapping[StreamId, Mapping[int, int]]) -> StreamCutSpec:
        """Given offsets per stream."""
        return cls(CutKind.EXPLICIT, {k: dict(v) for k, v in cuts.items()})

    def __str__(self) -> str:
        return format_stream_cut(self.cuts) if self.kind is CutKind.EXPLICIT else self.kind.value


def format_stream_cut(cuts: Mapping[StreamId, Mapping[int, int]]) -> str:
    """The text form of stream cuts (streams and segments sorted)."""
    parts = []
    for (scope, stream), cut in sorted(cuts.items()):
        segments = ",".join(f"{seg}={off}" for seg, off in sorted(cut.items()))
        parts.append(f"{scope}/{stream}:{segments}")
    return ";".join(parts)


def parse_stream_cut(option: str, text: str, allowed: tuple[str, ...]) -> StreamCutSpec:
    """Parse an option value: one of ``allowed`` symbolic names or the text form."""
    raw = text.strip()
    if raw.lower() in allowed:
        return StreamCutSpec(CutKind(raw.lower()))
    expected = (
        f"{' | '.join(allowed)} or a stream cut '<scope>/<stream>:<segment id>=<offset>,...' "
        "(several streams separated by ';')"
    )
    cuts: dict[StreamId, dict[int, int]] = {}
    for part in filter(None, (p.strip() for p in raw.split(";"))):
        name, sep, segments = part.partition(":")
        scope, slash, stream = name.strip().partition("/")
        if not sep or not slash or not scope or not stream or "/" in stream:
            raise InvalidOptionError(option, text, expected)
        cut: dict[int, int] = {}
        for item in filter(None, (s.strip() for s in segments.split(","))):
            seg, eq, off = item.partition("=")
            try:
                seg_id, offset = int(seg), int(off)
            except ValueError:
                raise InvalidOptionError(option, text, expected) from None
            if not eq or seg_id < 0 or offset < 0 or seg_id in cut:
                raise InvalidOptionError(option, text, expected)
            cut[seg_id] = offset
        if not cut or (scope, stream) in cuts:
            raise InvalidOptionError(option, text, expected)
        cuts[(scope, stream)] = cut
    if not cuts:
        raise InvalidOptionError(option, text, expected)
    return StreamCutSpec.explicit(cuts)
