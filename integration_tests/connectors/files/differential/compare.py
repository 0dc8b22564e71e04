"""Comparing Spark's outcome of a case with files-unified's: the differences, each with a kind.

Kinds (what a user would notice, most severe first):

* ``ours-fails``: Spark reads the case, files-unified fails;
* ``ours-succeeds``: Spark fails, files-unified reads it;
* ``later-error``: both fail, files-unified at a later stage;
* ``file-not-named``: Spark fails reading a file (its error names one), files-unified's error names
  no file of the case;
* ``columns``: other column names or types;
* ``rows``: other rows (batch), or another composition of the micro-batches (streaming).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from integration_tests.connectors.files.differential.cases import Case
from integration_tests.connectors.files.differential.runner import STAGES, Outcome

_FILE_STAGES = {"read", "run"}


@dataclass(frozen=True)
class Difference:
    """One way the two outcomes differ."""

    kind: str
    detail: str


def _rows_detail(spark: Outcome, ours: Outcome) -> str:
    s, o = list(spark.rows), list(ours.rows)
    only_spark = [r for r in s if r not in o]
    only_ours = [r for r in o if r not in s]
    return (
        f"{len(s)} vs {len(o)}; only in Spark: {only_spark[:4]!r}; only in files-unified: {only_ours[:4]!r}"
    )


def differences(case: Case, spark: Outcome, ours: Outcome) -> list[Difference]:
    """Every difference between Spark's outcome and ours for ``case``."""
    if spark.failed and ours.failed:
        out = []
        assert spark.stage is not None and ours.stage is not None
        if STAGES.index(ours.stage) > STAGES.index(spark.stage):
            out.append(Difference("later-error", f"Spark at {spark.stage}, files-unified at {ours.stage}"))
        names = [os.path.basename(f.rel) for f in case.files]
        about_a_file = any(n in (spark.error or "") for n in names)
        if spark.stage in _FILE_STAGES and about_a_file and not any(n in (ours.error or "") for n in names):
            out.append(Difference("file-not-named", f"files-unified: {(ours.error or '')[:300]}"))
        return out
    if spark.failed:
        return [Difference("ours-succeeds", f"Spark at {spark.stage}: {spark.error_class}: {_head(spark)}")]
    if ours.failed:
        return [Difference("ours-fails", f"files-unified at {ours.stage}: {ours.error_class}: {_head(ours)}")]
    out = []
    if spark.columns != ours.columns:
        out.append(Difference("columns", f"{spark.columns} vs {ours.columns}"))
    if spark.rows != ours.rows:
        out.append(Difference("rows", _rows_detail(spark, ours)))
    return out


def _head(outcome: Outcome) -> str:
    text = (outcome.error or "").strip().splitlines()
    return text[0][:300] if text else ""
