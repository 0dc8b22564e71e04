"""The differences from Spark's file sources that files-unified keeps on purpose.

Each ``Allowed`` is one row of the parity table in docs/files.md (its ``id`` is the row's first
cell; ``test_files_differential`` checks that the table and this list hold the same ids, and that
the table's Spark and files-unified cells are what running the row's ``example`` prints now).
A difference the harness finds is accepted only when an entry's ``explains`` says this input and
these outcomes are that row; anything else fails the test.
"""

from __future__ import annotations

import bz2
import datetime
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from integration_tests.connectors.files.differential.cases import SPARK_ONLY_OPTIONS, Case, FileSpec
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
        and ours.stage == "read"
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


_OTHER_SPARK_ONLY = ("mergeSchema",)
"""Spark-only options the typed cases set (``typed_cases.py``), beside ``SPARK_ONLY_OPTIONS``."""


def _spark_only_option(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> bool:
    keys = [k for k, _v in case.options if k in dict(SPARK_ONLY_OPTIONS) or k in _OTHER_SPARK_ONLY]
    return (
        bool(keys)
        and ours.error_class == "InvalidOptionError"
        and ours.stage in ("load", "read")
        and all(f"'{k.lower()}'" in (ours.error or "").lower() for k in keys)  # lowercased by Spark
        and d.kind in ("ours-fails", "later-error", "file-not-named")
    )


def _short_bzip2(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> bool:
    return (
        d.kind == "ours-fails"
        and bool({"not-bz2", "truncated-bz2"} & case.features)
        and ours.error_class == "DataLossError"
        and "bzip2 file" in (ours.error or "")
    )


def _rows_equal_when(spark: Outcome, ours: Outcome, blur: Callable[[Any], Any]) -> bool:
    """Whether the rows are the same once ``blur`` has replaced the values the row is about."""

    def blurred(rows: tuple[Any, ...]) -> list[str]:
        return sorted(repr(_deep(r, blur)) for r in rows)

    return spark.columns == ours.columns and blurred(spark.rows) == blurred(ours.rows)


def _deep(value: Any, blur: Callable[[Any], Any]) -> Any:
    if isinstance(value, tuple):
        return tuple(_deep(v, blur) for v in value)
    return blur(value)


def _quoted(v: Any) -> bool:
    return isinstance(v, str) and ('"' in v or "\\" in v)


def _json_text(v: Any) -> bool:
    return isinstance(v, str) and v[:1] in "[{-0123456789"


_VALUE_ROWS: dict[str, tuple[Callable[[Case], bool], Callable[[Any], bool]]] = {
    "csv-quotes": (
        lambda c: c.fmt == "csv" and bool({"csv-doubled", "csv-backslash"} & c.features),
        _quoted,
    ),
    "session-time-zone": (
        lambda c: "session-time-zone" in c.features,
        lambda v: isinstance(v, datetime.datetime),
    ),
    "json-text": (lambda c: c.fmt == "json" and "typed-json" in c.features, _json_text),
}
"""Rows about single values: (whether the case can show it, which values it is about). A case can
show several; each row then accepts rows that are equal once every such value is set aside."""


def _value_row(name: str) -> Explains:
    def explains(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> bool:
        applies, _about = _VALUE_ROWS[name]
        licensed = [about for when, about in _VALUE_ROWS.values() if when(case)]

        def blur(v: Any) -> Any:
            return "<set aside>" if any(about(v) for about in licensed) else v

        return d.kind == "rows" and applies(case) and _rows_equal_when(spark, ours, blur)

    return explains


_csv_quotes = _value_row("csv-quotes")
_session_time_zone = _value_row("session-time-zone")
_json_text_as_written = _value_row("json-text")


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
        input="a batch read with a user schema of a path that does not exist or a glob that matches nothing",
        reason=(
            "With a user schema, Spark builds a Python data source only at the first action, so no "
            "option or path check of files-unified can run at `load()`; the error comes before any data "
            "is read, names `path` and says what is valid. Without a user schema it comes at `load()`, "
            "as Spark's"
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
            "an option of Spark's file sources that files-unified does not have (`multiLine`, `lineSep`, "
            "`encoding`, `pathGlobFilter`, `recursiveFileLookup`, `ignoreCorruptFiles`, ...)"
        ),
        reason=(
            "Not implemented. files-unified refuses an option it does not know (at `load()`, or at the "
            "first action with a user schema, see F3), naming it and listing the valid ones, rather than "
            "read something other than what the option asks for"
        ),
        example=Case(
            "json",
            (FileSpec("part-0.json", b'{\n "id": 1,\n "name": "a"\n}\n'),),
            None,
            (("multiLine", "true"),),
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
        id="F7-csv-quotes-and-escapes",
        input=(
            'csv values with doubled quotes (`"a ""b"""`) or backslash escapes (`"a \\"b\\""`) and '
            "no `escape` option"
        ),
        reason=(
            "Spark's default `escape` is `\\`: it unescapes `\\\"` inside quotes, and a value with doubled "
            "quotes comes back with its quotes, as written. files-unified reads doubled quotes as one "
            "quote (RFC 4180, what most writers produce) and has no escape by default; set `escape` to "
            "read backslash-escaped quotes (pyarrow then unescapes outside quotes too, Spark does not). "
            "Not yet the same: a reader that follows univocity's rules would be needed"
        ),
        example=Case(
            "csv",
            (FileSpec("part-0.csv", b'1,"a ""b"""\n2,"c \\"d\\""\n'),),
            "id INT, name STRING",
            (("mode", "PERMISSIVE"),),
            features=frozenset({"csv-doubled", "csv-backslash", "typed-csv"}),
        ),
        explains=_csv_quotes,
    ),
    Allowed(
        id="F8-session-time-zone",
        input=(
            "json or csv timestamps without an offset (`2024-01-02T03:04:05`) read under a "
            "`spark.sql.session.timeZone` other than UTC"
        ),
        reason=(
            "Spark reads them in the session time zone; a Python data source is not told the session's "
            "settings, so files-unified reads them as UTC (timestamps with an offset or `Z` are the "
            "same). Write offsets into the data, or run the session in UTC"
        ),
        example=Case(
            "json",
            (FileSpec("part-0.json", b'{"id": 1, "ts": "2024-01-02T03:04:05"}\n'),),
            "id BIGINT, ts TIMESTAMP",
            (),
            features=frozenset({"typed-json", "session-time-zone"}),
            conf=(("spark.sql.session.timeZone", "America/New_York"),),
        ),
        explains=_session_time_zone,
    ),
    Allowed(
        id="F9-json-text-as-written",
        input='a JSON number, array or object read into a `STRING` column (`1e2`, `["x", "y"]`)',
        reason=(
            "Spark keeps the value's text as written in the file; files-unified writes the parsed value "
            'out again (`100.0`, `["x","y"]`): the same value, other spelling. Not yet the same: '
            "Python's JSON parser does not keep the text of a value"
        ),
        example=Case(
            "json",
            (FileSpec("part-0.json", b'{"id": 1, "v": 1e2}\n{"id": 2, "v": ["x", "y"]}\n'),),
            "id BIGINT, v STRING",
            (),
            features=frozenset({"typed-json"}),
        ),
        explains=_json_text_as_written,
    ),
)
"""Every difference kept on purpose, in the order of the table in docs/files.md."""


def explained(case: Case, spark: Outcome, ours: Outcome, d: Difference) -> str | None:
    """The id of the table row that explains ``d``, or ``None`` for a difference nobody accepted."""
    return next((a.id for a in ALLOWED if a.explains(case, spark, ours, d)), None)
