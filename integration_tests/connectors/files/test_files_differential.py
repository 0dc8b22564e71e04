"""Spark's own file sources as the oracle for files-unified (issue 22, files part).

Hypothesis draws cases (``differential/cases.py``): text, json, csv and parquet files with BOMs,
invalid UTF-8, ``\\n`` / ``\\r\\n`` / lone ``\\r`` line ends, multi-line records, malformed lines,
gzip, bzip2 and deflate files (some truncated or not compressed at all), corrupt, truncated and empty
Parquet files, ``key=value`` directories, globs (some matching nothing), a schema given or
inferred, every parse mode with and without ``_corrupt_record``. Each case is read through
``spark.read.<format>`` and ``spark.read.format("files-unified")`` (streaming: ``readStream`` with
``Trigger.AvailableNow`` and ``maxFilesPerTrigger``, compared micro-batch by micro-batch), and
every difference must be a row of the parity table in docs/files.md (``differential/allowlist.py``).

Seeded and bounded: ``SPARKFLOW_DIFF_EXAMPLES`` cases per run (default 20: 16 batch, 4
streaming; a fifth, at least 3, are streaming); ``SPARKFLOW_DIFF_SEED`` (default 22) picks another sequence.
``SPARKFLOW_DIFF_RECORD=<file>`` appends every case's outcome and differences as JSON lines.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from integration_tests.connectors.files.differential import parity
from integration_tests.connectors.files.differential.allowlist import ALLOWED, explained
from integration_tests.connectors.files.differential.cases import Case, cases
from integration_tests.connectors.files.differential.compare import differences
from integration_tests.connectors.files.differential.runner import Outcome, read_batch, read_stream
from integration_tests.connectors.files.differential.typed_cases import typed_cases

pytestmark = [pytest.mark.spark, pytest.mark.timeout(1800)]

EXAMPLES = int(os.environ.get("SPARKFLOW_DIFF_EXAMPLES", "20"))
"""Cases per run: a fifth (at least 3) streaming, the rest batch."""
STREAM_EXAMPLES = max(3, EXAMPLES // 5)
BATCH_EXAMPLES = max(1, EXAMPLES - STREAM_EXAMPLES)
TYPED_EXAMPLES = max(6, EXAMPLES // 4)
"""Cases of ``typed_cases`` (timestamps, decimals, nested values, escapes, Parquet schemas) per run."""
SEED = int(os.environ.get("SPARKFLOW_DIFF_SEED", "22"))
RECORD = os.environ.get("SPARKFLOW_DIFF_RECORD")


def _record(case: Case, spark: Outcome, ours: Outcome, found: list[tuple[str, str, str | None]]) -> None:
    if not RECORD:
        return
    entry = {
        "case": case.describe(),
        "spark": parity.describe(spark),
        "files_unified": parity.describe(ours),
        "differences": [{"kind": k, "detail": d, "row": row} for k, d, row in found],
    }
    with open(RECORD, "a") as f:
        f.write(json.dumps(entry, ensure_ascii=False, default=repr) + "\n")


def _check(case: Case, spark: Outcome, ours: Outcome, unexplained: list[str]) -> None:
    found = [(d.kind, d.detail, explained(case, spark, ours, d)) for d in differences(case, spark, ours)]
    _record(case, spark, ours, found)
    for kind, detail, row in found:
        if row is None:
            report = f"{kind}: {detail}\n    case: {case.describe()}\n    Spark: {spark.error or ''}"
            unexplained.append(report[:3000])


def _run(spark: Any, streaming: bool, examples: int, strategy: Any = cases, salt: int = 0) -> list[str]:
    unexplained: list[str] = []

    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @seed(SEED + int(streaming) + salt)
    @given(strategy(streaming=streaming))
    def one(case: Case) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="files-diff-"))
        try:
            root = tmp / "in"
            case.materialize(root)
            if streaming:
                spark_outcome = read_stream(spark, case, root, tmp / "c1", ours=False)
                ours = read_stream(spark, case, root, tmp / "c2", ours=True)
            else:
                spark_outcome = read_batch(spark, case, root, ours=False)
                ours = read_batch(spark, case, root, ours=True)
            _check(case, spark_outcome, ours, unexplained)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    one()
    return unexplained


def test_batch_reads_match_spark(spark: Any) -> None:
    unexplained = _run(spark, streaming=False, examples=BATCH_EXAMPLES)
    assert not unexplained, f"{len(unexplained)} differences from Spark not in docs/files.md:\n" + "\n".join(
        unexplained
    )


def test_streaming_micro_batches_match_spark(spark: Any) -> None:
    unexplained = _run(spark, streaming=True, examples=STREAM_EXAMPLES)
    assert not unexplained, f"{len(unexplained)} differences from Spark not in docs/files.md:\n" + "\n".join(
        unexplained
    )


def test_typed_values_match_spark(spark: Any) -> None:
    """Timestamps, decimals, nested values, CSV escapes, JSON arrays, multiLine, Parquet schemas."""
    unexplained = _run(spark, streaming=False, examples=TYPED_EXAMPLES, strategy=typed_cases, salt=100)
    assert not unexplained, f"{len(unexplained)} differences from Spark not in docs/files.md:\n" + "\n".join(
        unexplained
    )


def test_parity_table_matches_the_harness(spark: Any) -> None:
    """The table in docs/files.md is what ``parity.render`` prints now: same ids, same outcomes."""
    ids = [a.id for a in ALLOWED]
    assert len(set(ids)) == len(ids)
    documented = parity.documented()
    for allowed in ALLOWED:
        assert f"| {allowed.id} |" in documented, f"parity row {allowed.id} is missing from docs/files.md"
    assert parity.render(spark) == documented, (
        "docs/files.md's parity table is stale: run "
        "`python -m integration_tests.connectors.files.differential.parity --write`"
    )
