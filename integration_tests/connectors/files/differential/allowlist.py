"""The differences from Spark's file sources that files-unified keeps on purpose.

Each ``Allowed`` is one row of the parity table in docs/files.md (its ``id`` is the row's first
cell; ``test_files_differential`` checks that the table and this list hold the same ids, and that
the table's Spark and files-unified cells are what running the row's ``example`` prints now).
A difference the harness finds is accepted only when an entry's ``explains`` says this input and
these outcomes are that row; anything else fails the test.
"""

from __future__ import annotations

import bz2
import gzip
from collections.abc import Callable
from dataclasses import dataclass

from integration_tests.connectors.files.differential.cases import (
    CORRUPT,
    SPARK_ONLY_FOR_FORMAT,
    SPARK_ONLY_OPTIONS,
    Case,
    FileSpec,
)
from integration_tests.connectors.files.differential.compare import Difference
from integration_tests.connectors.files.differential.runner import Outcome

Explains = Callable[[Case, Outcome, Outcome, Difference], bool]


@dataclass(frozen=True)
class Allowed:
    """A row of the parity table: an input, what a user sees from both, and why it stays."""

    id: str
    input: str
    reason: str
    example: Case
    explains: Explains


def _default_mode(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> bool:
    return (
        d.kind == "ours-fails"
        and "mode-default" in case.features
        and ours.error_class == "MalformedRecordError"
    )


def _partition_columns(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> bool:
    if not (case.partitioned and case.schema is not None):
        return False
    if d.kind == "columns":
        return spark.columns[: len(ours.columns)] == ours.columns and len(spark.columns) > len(ours.columns)
    if d.kind == "rows":  # the same rows without the partition column(s)
        extra = len(spark.columns) - len(ours.columns)
        strip = sorted(((r[:-extra] if extra else r) for r in spark.rows), key=repr)
        return not ours.rows or tuple(strip) == ours.rows or _batches_strip(spark, ours, extra)
    return False


def _batches_strip(spark: Outcome, ours: Outcome, extra: int) -> bool:
    if not extra or not spark.rows or spark.rows[0][:1] != ("batch",):
        return False
    strip = tuple(("batch", tuple(sorted((r[:-extra] for r in b[1]), key=repr))) for b in spark.rows)
    return strip == ours.rows


def _no_python_at_load(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> bool:
    return (
        d.kind == "later-error"
        and case.schema is not None
        and spark.stage == "load"
        and ours.stage in (("start", "run") if case.streaming else ("read",))
        and ours.error_class == "InvalidOptionError"
    )


def _stream_glob_no_match(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> bool:
    return (
        d.kind == "ours-fails"
        and case.streaming
        and "glob-no-match" in case.features
        and ours.error_class == "InvalidOptionError"
        and not spark.rows
    )


def _partial_malformed_record(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> bool:
    """Each malformed line's row: Spark's with some fields read, files-unified's with them null."""
    names = [c[0] for c in spark.columns]
    if (
        d.kind != "rows"
        or CORRUPT not in names
        or spark.columns != ours.columns
        or len(spark.rows) != len(ours.rows)
    ):
        return False
    at = names.index(CORRUPT)
    mine = {r[at]: r for r in ours.rows if r[at] is not None}
    for row in spark.rows:
        other = mine.get(row[at]) if row[at] is not None else row
        if other is None or any(o is not None and o != v for o, v in zip(other, row, strict=True)):
            return False
    return sorted(map(repr, (r for r in spark.rows if r[at] is None))) == sorted(
        map(repr, (r for r in ours.rows if r[at] is None))
    )


_OTHER_SPARK_ONLY: tuple[str, ...] = ()
"""Spark-only options the typed cases set (``typed_cases.py``), beside ``SPARK_ONLY_OPTIONS``."""


def _spark_only_option(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> bool:
    refused = {*dict(SPARK_ONLY_OPTIONS), *_OTHER_SPARK_ONLY}
    refused |= {k for k, v in SPARK_ONLY_FOR_FORMAT.get(case.fmt, ()) if case.option_map.get(k) == v}
    keys = [k for k, _v in case.options if k in refused]
    return (
        bool(keys)
        and ours.error_class == "InvalidOptionError"
        and ours.stage in ("load", "read")
        and all(f"'{k.lower()}'" in (ours.error or "").lower() for k in keys)  # lowercased by Spark
        and d.kind in ("ours-fails", "later-error", "file-not-named")
    )


def _partition_keys(case: Case) -> set[str]:
    """The ``key`` of every ``key=value`` directory of a partitioned case."""
    if not case.partitioned:
        return set()
    return {part.split("=", 1)[0] for f in case.files for part in f.rel.split("/")[:-1] if "=" in part}


def _nothing_to_infer(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> bool:
    return (
        d.kind == "ours-fails"
        and case.schema is None
        and case.fmt in ("json", "csv")
        and all(name in _partition_keys(case) for name, _type in spark.columns)
        and not spark.rows
        and ours.error_class == "InvalidOptionError"
        and ours.stage == "load"
        and "infer the schema from" in (ours.error or "")
    )


def _short_bzip2(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> bool:
    return (
        d.kind == "ours-fails"
        and bool({"not-bz2", "truncated-bz2"} & case.features)
        and ours.error_class == "DataLossError"
        and "bzip2 file" in (ours.error or "")
    )


def _compressed_document_text(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> bool:
    return (
        d.kind == "rows"
        and case.option_map.get("multiLine") == "true"
        and "value-text" in case.features
        and bool({"gzip", "bz2", "deflate"} & case.features)
        and len(spark.rows) == len(ours.rows)
    )


def _glob_matching_nothing(streaming: bool) -> Case:
    return Case(
        "text",
        (FileSpec("part-0.txt", b"a\n"),),
        "value STRING",
        (),
        glob="*.nomatch",
        streaming=streaming,
        features=frozenset({"glob-no-match"}),
    )


ALLOWED: tuple[Allowed, ...] = (
    Allowed(
        id="F1-default-mode",
        input="csv or json with a malformed line and no `mode` option",
        reason=(
            "Spark's default `PERMISSIVE` turns the line into a row of nulls without a word; files-unified "
            "fails by default, naming the file and the byte offset. Set `mode=PERMISSIVE` for Spark's "
            "behaviour (then the outcomes match)"
        ),
        example=Case(
            "csv",
            (FileSpec("part-0.csv", b"1,a\nx,b\n", faulty=True),),
            "id INT, name STRING",
            (),
            features=frozenset({"mode-default", "csv-type-mismatch"}),
        ),
        explains=_default_mode,
    ),
    Allowed(
        id="F2-partition-columns-user-schema",
        input="`key=value` directories read with a user schema that does not name the partition columns",
        reason=(
            "Spark appends the partition columns to a user schema; Spark's Python data source API fixes a "
            "source's columns to the user schema, so files-unified cannot. Name the partition columns in "
            "the schema (`id BIGINT, name STRING, p INT`) and the outcomes match"
        ),
        example=Case(
            "json",
            (FileSpec("p=1/part-0.json", b'{"id": 1, "name": "a"}\n'),),
            "id BIGINT, name STRING",
            (),
            partitioned=True,
            features=frozenset({"partitioned"}),
        ),
        explains=_partition_columns,
    ),
    Allowed(
        id="F3-user-schema-errors-at-first-action",
        input=(
            "a read with a user schema of a path that does not exist, a glob that matches nothing, "
            "or with an invalid option value"
        ),
        reason=(
            "With a user schema, Spark builds a Python data source only at the first action (a stream: "
            "when it starts), so no "
            "option or path check of files-unified can run at `load()`; the error comes before any data "
            "is read, names `path` (or the option) and says what is valid. Without a user schema it "
            "comes at `load()`, as Spark's"
        ),
        example=_glob_matching_nothing(streaming=False),
        explains=_no_python_at_load,
    ),
    Allowed(
        id="F4-stream-glob-matches-nothing",
        input="a streaming read (`Trigger.AvailableNow`) of a glob that matches nothing",
        reason=(
            "Spark's file stream source waits for files (AvailableNow: ends with none); files-unified's "
            "default source (`continuous=false`) reads the files present at the start, so it would never "
            "read anything: it fails naming `path` (most often a typo). With `continuous=true` it waits "
            "for files, as Spark's"
        ),
        example=_glob_matching_nothing(streaming=True),
        explains=_stream_glob_no_match,
    ),
    Allowed(
        id="F5-spark-only-options",
        input=(
            "an option of Spark's file sources that files-unified does not have yet: date and "
            "timestamp formats (`dateFormat`, `timestampFormat`, ...), `locale`, ..."
        ),
        reason=(
            "Not implemented yet. files-unified refuses an option it does not know (at `load()`, or at "
            "the first action with a user schema, see F3), naming it and listing the valid ones, rather "
            "than read something other than what the option asks for"
        ),
        example=Case(
            "json",
            (FileSpec("part-0.json", b'{"id": 1, "name": "a"}\n'),),
            "id BIGINT, name STRING",
            (("timestampFormat", "yyyy-MM-dd HH:mm:ss"),),
            features=frozenset({"spark-only-option"}),
        ),
        explains=_spark_only_option,
    ),
    Allowed(
        id="F6-bzip2-cut-short",
        input="a `.bz2` file that ends before its end-of-stream marker, or is not bzip2 at all",
        reason=(
            "Hadoop's bzip2 codec hands Spark the blocks it could decode and no error, so Spark reads "
            "part of the file (or nothing) without a word; files-unified fails naming the file "
            "(`DataLossError`), as both do for a gzip file cut short"
        ),
        example=Case(
            "text",
            (FileSpec("part-0.txt.bz2", bz2.compress(b"a\nb\n")[:-6], faulty=True),),
            "value STRING",
            (),
            features=frozenset({"bz2", "truncated-bz2"}),
        ),
        explains=_short_bzip2,
    ),
    Allowed(
        id="F7-nothing-to-infer",
        input="a json or csv read without a schema of a location whose files are all empty",
        reason=(
            "Spark infers a schema with no columns (or only the partition columns of `key=value` "
            "directories) and reads nothing; files-unified cannot tell at "
            "`load()` whether a batch or a stream asked (Spark's Python data source API does not say), "
            "and a stream whose columns were inferred from no data would drop every field of the records "
            "that arrive later. It fails at `load()` naming `path` and asking for a schema "
            "(`.schema(...)`); with one, both read no rows"
        ),
        example=Case(
            "json",
            (FileSpec("part-0.json", b""),),
            None,
            (),
            features=frozenset({"empty-file"}),
        ),
        explains=_nothing_to_infer,
    ),
    Allowed(
        id="F8-multiline-compressed-value-text",
        input=(
            "a compressed (`.gz`, `.bz2`, `.deflate`) `multiLine` JSON file with a number with a "
            "fraction, an array or an object in a string column"
        ),
        reason=(
            "Spark keeps such a value's text as written (`[1, 2.50]`) in a line, or in an uncompressed "
            "multiLine file, but re-renders it from a compressed multiLine file (compact, numbers as Java "
            "doubles: `[1,2.5]`), so the same document reads two ways. files-unified keeps the text as "
            "written in every case, as Spark's uncompressed reads"
        ),
        example=Case(
            "json",
            (FileSpec("part-0.json.gz", gzip.compress(b'{"id": 1, "name": [1, 2.50]}', mtime=0)),),
            "id BIGINT, name STRING",
            (("multiLine", "true"),),
            features=frozenset({"gzip", "value-text", "multiline-json"}),
        ),
        explains=_compressed_document_text,
    ),
    Allowed(
        id="F9-partial-malformed-record",
        input=(
            "`PERMISSIVE`, a JSON line malformed by a bad token inside an object that a string column "
            "takes as its text"
        ),
        reason=(
            "Both keep the line in the corrupt-record column; Spark's parser also keeps the fields it "
            "read before the error in that one case (not inside an array, not at the line's end, not "
            "in a top-level array). files-unified gives the malformed line's other columns null, as "
            "both do for every other malformed line"
        ),
        example=Case(
            "json",
            (FileSpec("part-0.json", b'{"id": 4, "name": {"x": oops}}\n', faulty=True),),
            "id BIGINT, name STRING, _corrupt_record STRING",
            (("mode", "PERMISSIVE"),),
        ),
        explains=_partial_malformed_record,
    ),
)
"""Every difference kept on purpose, in the order of the table in docs/files.md."""


def explained(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> str | None:
    """The id of the table row that explains ``d``, or ``None`` for a difference nobody accepted."""
    return next((a.id for a in ALLOWED if a.explains(case, spark, ours, d)), None)
