"""``EventRouter``: which segment an event goes to, the way the official Pravega clients choose.

A routing key is hashed into the key space ``[0, 1)``: MurmurHash3 x64 128-bit, seeded with
1741865571 (Java's ``"EventRouter".hashCode()``), over the key's UTF-16 little-endian code units;
the first 64-bit half of the hash, shifted right by 12, is the mantissa of a double in ``[1, 2)``
and the key is that double minus 1. The segment is the one with the smallest upper bound at or
above the key (Java's ``ceilingEntry``). An event without a routing key goes to a uniformly random
point of the key space.

The Rust client (which the PyPI ``pravega`` package wraps) sizes its UTF-16 buffer by the key's
UTF-8 length and hashes the whole buffer, so a key with non-ASCII characters is hashed with
trailing zero code units (one per UTF-8 byte beyond the UTF-16 length). Java hashes the code units
alone. Both agree on ASCII keys. This router follows the Rust client, so the sink keeps putting a
key where the sink put it before it wrote through its own client (order per key across the switch);
``java_compatible=True`` hashes as the Java client does.

MurmurHash3 comes from ``mmh3`` (a maintained C extension), not hand-written code.

Threading: one router per writer, used by the writer's thread.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence

from connector_base import ConnectorError
from connectors.pravega.controller_client import SegmentRange

__all__ = ["EVENT_ROUTER_SEED", "EventRouter", "hash_routing_key"]

EVENT_ROUTER_SEED = 1741865571
"""Java's ``"EventRouter".hashCode()``, the seed both official clients hash routing keys with."""
_MANTISSA = float(1 << 52)
_CACHE_LIMIT = 1 << 16


def hash_routing_key(key: str, java_compatible: bool = False) -> float:
    """The point in ``[0, 1)`` that ``key`` routes to (see the module docstring)."""
    import mmh3

    raw = key.encode("utf-16-le")
    if not java_compatible:
        missing = len(key.encode("utf-8")) - len(raw) // 2
        if missing > 0:
            raw += b"\x00\x00" * missing
    upper = mmh3.hash64(raw, EVENT_ROUTER_SEED, x64arch=True, signed=False)[0]
    return (upper >> 12) / _MANTISSA


class EventRouter:
    """Routes keys to the segments of one epoch (or a transaction's segments)."""

    def __init__(self, segments: Sequence[SegmentRange], java_compatible: bool = False) -> None:
        if not segments:
            raise ConnectorError("a Pravega stream without segments cannot be written to (is it sealed?)")
        ordered = sorted(segments, key=lambda s: s.max_key)
        self.segments: list[SegmentRange] = ordered
        self._upper = [s.max_key for s in ordered]
        self._java = java_compatible
        self._cache: dict[str, int] = {}

    def index_of(self, key: str | None) -> int:
        """Index into :attr:`segments` of the segment for ``key`` (``None``: a random one)."""
        if key is None:
            return self._index(random.random())
        index = self._cache.get(key)
        if index is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            index = self._cache[key] = self._index(hash_routing_key(key, self._java))
        return index

    def segment_for(self, key: str | None) -> SegmentRange:
        """The segment for ``key``."""
        return self.segments[self.index_of(key)]

    def _index(self, point: float) -> int:
        index = bisect.bisect_left(self._upper, point)
        return min(index, len(self._upper) - 1)
