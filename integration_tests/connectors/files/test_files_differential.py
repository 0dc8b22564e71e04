"""Spark's own file sources as the oracle for files-unified (issue 22, files part).

Hypothesis draws cases (``differential/cases.py``): text, json, csv and parquet files with BOMs,
invalid UTF-8, ``\\n`` / ``\\r\\n`` / lone ``\\r`` line ends, multi-line records, malformed lines,
gzip, bzip2 and deflate files (some truncated or not compressed at all), corrupt, truncated and empty
Parquet files, ``key=value`` directories, globs (some matching nothing), a schema given or
inferred, every parse mode with and without ``_corrupt_record``, ``multiLine`` JSON documents, and
``pathGlobFilter``, ``recursiveFileLookup``, ``modifiedBefore`` / ``modifiedAfter``,
``ignoreMissingFiles``, ``ignoreCorruptFiles``, ``lineSep``, ``encoding`` / ``charset`` (files written
in that charset), csv ``inferSchema``, ``samplingRatio`` (valid and invalid values) and, in the typed
cases, Parquet ``mergeSchema``. Each case is read through
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

from integration_tests.connectors.differential_report import findings_message
from integration_tests.connectors.files.differential import parity
from integration_tests.connectors.files.differential.allowlist import ALLOWED, explained
from integration_tests.connectors.files.differential.cases import Case, FileSpec, cases
from integration_tests.connectors.files.differential.compare import differences
from integration_tests.connectors.files.differential.runner import Outcome, read_batch, read_stream
from integration_tests.connectors.files.differential.typed_cases import parquet_bytes, typed_cases

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
            report = (
                f"{kind}: {detail[:1500]}\n    case: {case.describe()}"
                f"\n    Spark: {(spark.error or '')[:1500]}\n    files-unified: {(ours.error or '')[:1500]}"
            )
            unexplained.append(report)


def _failure(unexplained: list[str]) -> str:
    return findings_message("differences from Spark not in docs/files.md", unexplained)


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
    assert not unexplained, _failure(unexplained)


def test_streaming_micro_batches_match_spark(spark: Any) -> None:
    unexplained = _run(spark, streaming=True, examples=STREAM_EXAMPLES)
    assert not unexplained, _failure(unexplained)


def test_typed_values_match_spark(spark: Any) -> None:
    """Timestamps, decimals, nested values, CSV escapes, JSON arrays, multiLine, Parquet schemas."""
    unexplained = _run(spark, streaming=False, examples=TYPED_EXAMPLES, strategy=typed_cases, salt=100)
    assert not unexplained, _failure(unexplained)


NEW_YORK = (("spark.sql.session.timeZone", "America/New_York"),)
FIXED: tuple[Case, ...] = (
    # former row F7: Spark's default escape is a backslash, a doubled quote is no escape
    Case(
        "csv",
        (FileSpec("part-0.csv", b'1,"a ""b"""\n2,"c \\"d\\""\n3,back\\slash\n4,"x" y\n'),),
        "id INT, name STRING",
        (("mode", "PERMISSIVE"),),
    ),
    # former row F8: timestamps without an offset are read in the session's time zone
    Case(
        "json",
        (
            FileSpec(
                "part-0.json",
                b'{"id": 1, "ts": "2024-01-02T03:04:05"}\n{"id": 2, "ts": "2024-07-02T03:04:05+01:00"}\n',
            ),
        ),
        "id BIGINT, ts TIMESTAMP",
        (),
        conf=NEW_YORK,
    ),
    Case(
        "csv",
        (FileSpec("part-0.csv", b"1,2024-01-02T03:04:05\n2,2024-07-02 03:04:05\n3,2024-01-02T03:04:05Z\n"),),
        "id INT, ts TIMESTAMP",
        (),
        conf=NEW_YORK,
    ),
    # former row F9: a JSON value in a string column keeps its text as written
    Case(
        "json",
        (
            FileSpec(
                "part-0.json", b'{"id": 1, "v": 1e2}\n{"id": 2, "v": ["x", "y"]}\n{"id": 3, "v": -0.50}\n'
            ),
        ),
        "id BIGINT, v STRING",
        (),
    ),
    # long run finding: an object with no field of the (inferred) schema is still a row
    Case(
        "json",
        (FileSpec("p=1/part-0.json", b"\xef\xbb\xbf{}"),),
        None,
        (("multiLine", "true"),),
        partitioned=True,
    ),
    Case("json", (FileSpec("part-0.json", b"{}\n{}\n"),), None, (("mode", "FAILFAST"),), glob="part-*"),
    # found with lineSep / inferSchema: a Parquet schema is the first file's by path, not the oldest's
    Case(
        "parquet",
        (
            FileSpec("part-1.parquet", parquet_bytes("base", 0, 1)),
            FileSpec("part-0.parquet", parquet_bytes("added-column", 10, 1)),
        ),
        None,
        (),
    ),
    # ... a truncated Parquet file that modifiedAfter leaves out is never opened
    Case(
        "parquet",
        (
            FileSpec("part-0.parquet", parquet_bytes("base", 0, 1)[:200], faulty=True),
            FileSpec("part-1.parquet", parquet_bytes("base", 10, 1)),
        ),
        "id BIGINT, name STRING",
        (("modifiedAfter", "2023-11-14T22:13:20.5"), ("timeZone", "UTC")),
    ),
    # ... csv numbers and timestamps as Spark's parser reads them (Integer.parseInt, Double.parseDouble)
    Case(
        "csv",
        (FileSpec("part-0.csv", b"+1,1.5d, 2,2024-1-1\n007,NaN,Inf,2024-01-02 03:04\n"),),
        "id INT, v DOUBLE, w DOUBLE, ts TIMESTAMP",
        (("mode", "PERMISSIVE"),),
    ),
    # ... a JSON line is its first value (pyarrow read a second object on the line as a row)
    Case(
        "json",
        (FileSpec("part-0.json", b'{"id": 1, "name": "a"} {"id": 2}\n\n{"id": 3, "name": "b"} xx\n'),),
        "id BIGINT, name STRING",
        (("mode", "PERMISSIVE"),),
    ),
    # ... lineSep in another charset: values hold line breaks
    Case(
        "csv",
        (FileSpec("part-0.csv", '1,\u00e9;2,b\nc;3,"x\ny"'.encode("utf-16le")),),
        "id INT, name STRING",
        (("lineSep", ";"), ("encoding", "UTF-16LE"), ("mode", "PERMISSIVE")),
    ),
    # former row F5: csv multiLine, quoted values spanning lines (\r\n found first: \n inside values)
    Case(
        "csv",
        (FileSpec("part-0.csv", b'id,name\r\n1,"a\r\nb"\r\n2,"c\n\nd"\n\r\n3,x\r\n'),),
        None,
        (("multiLine", "true"), ("header", "true"), ("inferSchema", "true")),
    ),
    # ... a malformed multiLine document's corrupt-record text is the file's bytes read as UTF-8, not
    # decoded by charset (found by CI's run: files-unified decoded it)
    Case(
        "json",
        (FileSpec("part-0.json", '[{"id": 1, "name": "\u00e9"}, 7]'.encode("utf-16le")),),
        "id BIGINT, name STRING, _corrupt_record STRING",
        (("multiLine", "true"), ("charset", "UTF-16LE"), ("mode", "PERMISSIVE")),
    ),
    # ... byte-order marks in csv (found by the 500-example run, seed 2811): Spark's parser drops one at
    # the start of a file's first non-blank line (multiLine: of the file) and reads a mark alone as NUL;
    # pyarrow dropped one at the start of every chunk
    Case(
        "csv",
        (
            FileSpec("part-0.csv", b"\xef\xbb\xbf"),
            FileSpec("part-1.csv", b"\xef\xbb\xbf\xef\xbb\xbfx\n\xef\xbb\xbfy\n"),
        ),
        None,
        (("multiLine", "true"),),
    ),
    Case(
        "csv",
        (
            FileSpec("part-0.csv", b"\n\xef\xbb\xbfh\n\xef\xbb\xbfx\n"),
            FileSpec("part-1.csv", b"\xef\xbb\xbf\xef\xbb\xbf\n"),
        ),
        None,
        (("header", "true"),),
    ),
    # ... maxFilesPerTrigger admits the oldest files first (latestFirst: the newest), after a batch too
    # (found by the 500-example run, seed 2811: the offset's files came back in path order)
    *(
        Case(
            "parquet",
            tuple(
                FileSpec(f"{name}.parquet", parquet_bytes("base", 10 * i, i + 1))
                for i, name in enumerate(names)
            ),
            "id BIGINT, name STRING",
            options,
            streaming=True,
            max_files_per_trigger=1,
        )
        for names, options in (
            (("c", "b", "a"), ()),
            (("part-0", "part-1", "part-2"), (("latestFirst", "true"),)),
        )
    ),
    # allowSingleQuotes (Spark's default): single-quoted names and strings, a nested value's text as
    # written; files-unified took such lines as malformed
    *(
        Case(
            "json",
            (FileSpec("part-0.json", data),),
            schema,
            (("mode", "PERMISSIVE"), *options),
        )
        for data, options in (
            (
                b"{'id': 1, 'name': 'say \"hi\"'}\n"
                b"{'id': 2, 'name': {'a': [1, 'x']}}\n{'id': 3, 'name': 'open}\n",
                (),
            ),
            (b"[{'id': 8, 'name': 'it\\'s'}, {'id': 9}]", (("multiLine", "true"),)),
        )
        for schema in ("id BIGINT, name STRING, _corrupt_record STRING", None)
    ),
    # former row F5: the JSON parser's other allow... options
    *(
        Case("json", (FileSpec("part-0.json", data),), schema, (("mode", "PERMISSIVE"), (option, "true")))
        for option, data in (
            (
                "allowComments",
                b'{"id": 1, /* c */ "name": "a"}\n{"id": 2, "name": {"x": /* in */ 1}} // tail\n'
                b'/* lead */ {"id": 3}\n{"id": 4, "name": "/* not */"}\n{"id": 5 /* open\n',
            ),
            (
                "allowUnquotedFieldNames",
                b'{id: 1, name: "a"}\n{id: 2, $n_1: 3, name: {x: 1}}\n{id: 4, 5x: 1}\n',
            ),
            (
                "allowNumericLeadingZeros",
                b'{"id": 007, "name": "a"}\n{"id": -00, "name": 0012}\n{"id": 05}\n',
            ),
            (
                "allowBackslashEscapingAnyCharacter",
                b'{"id": 1, "name": "a\\qb"}\n{"id": 2, "name": "\\\'x"}\n',
            ),
            ("allowUnquotedControlChars", b'{"id": 1, "name": "a\tb"}\n{"id": 2, "name": {"k": "t\x01u"}}\n'),
        )
        for schema in ("id BIGINT, name STRING, _corrupt_record STRING", None)
    ),
    # former row F5: prefersDecimal, primitivesAsString (inference), decimals inside arrays and structs
    *(
        Case(
            "json",
            (
                FileSpec(
                    "part-0.json",
                    b'{"id": 1, "v": 1.50, "w": 2, "b": true, "s": "x", "o": {"q": 0.001}}\n'
                    b'{"id": 2, "v": 12.5, "w": 3.25, "b": false, "a": [1.5, 2]}\n'
                    b'{"id": 4, "v": 123456789012345678901234567890.123456789}\n',
                ),
            ),
            None,
            options,
        )
        for options in ((("prefersDecimal", "true"),), (("primitivesAsString", "true"),))
    ),
    # allowNonNumericNumbers (Spark's default true): +INF, -INF and +Infinity too, INF alone not
    *(
        Case(
            "json",
            (
                FileSpec(
                    "part-0.json",
                    b'{"id": 1, "v": INF}\n{"id": 2, "v": +INF}\n{"id": 3, "v": -INF}\n'
                    b'{"id": 4, "v": +Infinity}\n'
                    b'{"id": 5, "v": -Infinity, "s": NaN}\n{"id": 6, "v": +1.5}\n{"id": 7, "s": -INF}\n',
                ),
            ),
            schema,
            (("mode", "PERMISSIVE"), *options),
        )
        for schema, options in (
            ("id BIGINT, v DOUBLE, s STRING, _corrupt_record STRING", ()),
            (None, ()),
            ("id BIGINT, v DOUBLE, s STRING, _corrupt_record STRING", (("allowNonNumericNumbers", "false"),)),
        )
    ),
    Case(
        "json",
        (
            FileSpec(
                "part-0.json",
                b'{"id": 1, "n": null, "e": [], "o": {"x": null}, "s": "", "k": [null]}\n'
                b'{"id": 2, "n": null, "o": {}, "p": {"q": null, "r": 1}}\n',
            ),
        ),
        None,
        (("dropFieldIfAllNull", "true"),),
    ),
    # former row F5: Parquet mergeSchema
    Case(
        "parquet",
        (
            FileSpec("part-0.parquet", parquet_bytes("base", 0, 1)),
            FileSpec("part-1.parquet", parquet_bytes("added-column", 10, 1)),
        ),
        None,
        (("mergeSchema", "true"),),
    ),
)
"""The examples of parity rows since fixed: no difference at all, not even one the table allows."""


def test_fixed_differences_stay_fixed(spark: Any) -> None:
    found = []
    for case in FIXED:
        tmp = Path(tempfile.mkdtemp(prefix="files-diff-"))
        try:
            case.materialize(tmp / "in")
            if case.streaming:
                spark_outcome = read_stream(spark, case, tmp / "in", tmp / "c1", ours=False)
                ours = read_stream(spark, case, tmp / "in", tmp / "c2", ours=True)
            else:
                spark_outcome = read_batch(spark, case, tmp / "in", ours=False)
                ours = read_batch(spark, case, tmp / "in", ours=True)
            assert spark_outcome.rows, f"Spark read nothing from {case.describe()}: {spark_outcome.error}"
            found += [f"{d.kind}: {d.detail}" for d in differences(case, spark_outcome, ours)]
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    assert not found, "\n".join(found)


ROW_CASES: tuple[tuple[str, Case], ...] = (
    # long-run finding: from empty files in key=value directories Spark infers the partition column alone
    (
        "F7-nothing-to-infer",
        Case("csv", (FileSpec("p=1/part-0.csv", b""),), None, (("mode", "FAILFAST"),), partitioned=True),
    ),
)
"""Cases a parity row was widened for (its example aside): each difference is explained by that row."""


def test_widened_rows_explain_their_cases(spark: Any) -> None:
    for row, case in ROW_CASES:
        tmp = Path(tempfile.mkdtemp(prefix="files-diff-"))
        try:
            case.materialize(tmp / "in")
            spark_outcome = read_batch(spark, case, tmp / "in", ours=False)
            ours = read_batch(spark, case, tmp / "in", ours=True)
            found = differences(case, spark_outcome, ours)
            assert found, f"no difference left for {row}: {case.describe()}"
            assert [explained(case, spark_outcome, ours, d) for d in found] == [row] * len(found)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


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
