"""How many hypothesis examples a differential test runs, and the settings they run with.

``make test`` runs a few per test (seeded: the same examples every run); a long run sets
``SPARKFLOW_DIFF_EXAMPLES`` (for example 500) and every test runs that many, after the same first
ones. ``SPARKFLOW_DIFF_SEED=n`` draws other examples, seeded by ``n`` instead of by the test's
name, so a long run can be made in parts on a shared machine (each part a new seed) and add up to
distinct examples. ``SPARKFLOW_DIFF_REPORT=path`` appends every example's outcome as JSON lines there.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, seed, settings

__all__ = ["examples", "hypothesis_settings", "record", "timeout_s"]


def examples(default: int) -> int:
    """``default``, or ``SPARKFLOW_DIFF_EXAMPLES`` when set."""
    raw = os.environ.get("SPARKFLOW_DIFF_EXAMPLES")
    return int(raw) if raw else default


def timeout_s(default: int, per_example_s: int) -> int:
    """A pytest timeout for ``examples(default)`` examples of about ``per_example_s`` each."""
    return 300 + examples(default) * per_example_s


def hypothesis_settings(default: int) -> Callable[[Any], Any]:
    """Seeded (``derandomize``, or ``SPARKFLOW_DIFF_SEED``), no shrinking (an example costs seconds;
    the report shows it whole)."""
    raw_seed = os.environ.get("SPARKFLOW_DIFF_SEED")
    chosen = settings(
        max_examples=examples(default),
        derandomize=raw_seed is None,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    if raw_seed is None:
        return chosen
    return lambda test: seed(int(raw_seed))(chosen(test))


def record(entry: dict[str, Any]) -> None:
    """Append ``entry`` to ``SPARKFLOW_DIFF_REPORT`` when it is set."""
    path = os.environ.get("SPARKFLOW_DIFF_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, default=str) + "\n")
