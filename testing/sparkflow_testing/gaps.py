"""Known gaps of a local server: what a stand-in (or a local build of the real one) gets wrong.

Each server family declares its gaps as an ``Enum`` whose values are the skip reasons; a server
object lists the gaps it has, and a test asks for a skip reason with ``gap_reason``.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["DeclaresGaps"]


class DeclaresGaps:
    """Mixin of a server object with a ``kind`` (its name in reasons) and the ``gaps`` it has."""

    kind: str
    gaps: frozenset[Enum]

    def gap_reason(self, *gaps: Enum) -> str | None:
        """A skip reason if this server has any of ``gaps``, else ``None``."""
        for gap in gaps:
            if gap in self.gaps:
                return f"{self.kind}: {gap.value}"
        return None
