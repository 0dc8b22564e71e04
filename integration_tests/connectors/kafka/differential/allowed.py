"""Differences docs/kafka.md's parity table calls "different on purpose", each citing its row.

Each :class:`Allowance` names the anchor of its row (``<a id="..."></a>`` in the table; a test checks
that every anchor exists and its row says "different on purpose") and a predicate saying whether a
difference the harness found is that one. A difference no allowance explains fails the test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from integration_tests.connectors.kafka.differential.harness import Difference, Outcome
from integration_tests.connectors.kafka.differential.options import Case

__all__ = ["ALLOWANCES", "Allowance", "explained_by"]


@dataclass(frozen=True)
class Allowance:
    """A documented difference: the parity table row's anchor and when a difference is it."""

    anchor: str
    matches: Callable[[Case, Difference, Outcome, Outcome, bool], bool]


ALLOWANCES: tuple[Allowance, ...] = ()


def explained_by(case: Case, diff: Difference, spark: Outcome, ours: Outcome, streaming: bool) -> str | None:
    """The anchor of the row that explains ``diff``, or ``None``."""
    for allowance in ALLOWANCES:
        if allowance.matches(case, diff, spark, ours, streaming):
            return allowance.anchor
    return None
