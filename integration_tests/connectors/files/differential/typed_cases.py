"""Generated cases with values beyond ``id, name``: timestamps, decimals, nested values, escapes.

``typed_cases()`` draws one of:

* ``typed-json``: JSON lines with a timestamp (in every form Spark's default ``timestampFormat``
  and its fallback parser meet: ``T`` or blank, fractions, ``Z`` / offsets, a date alone, garbage), a
  decimal (JSON numbers with fractions, exponents, too many digits) and a nested struct with an
  array; some lines are top-level arrays of objects (Spark reads each object as a record);
  read with a user schema (``TIMESTAMP``, ``DECIMAL(10,2)``, ``STRUCT<...>``) or inferred;
* ``typed-csv``: CSV with a timestamp and a decimal, and string values with backslash escapes
  (Spark's default ``escape`` is ``\\``: ``"a\\"b"`` is ``a"b``) and doubled quotes;
* ``csv-quotes``: CSV lines as Spark's own writer writes values (quoted when they hold a quote, the
  delimiter or a line break, ``\\`` and ``"`` escaped inside quotes) mixed with random lines over
  ``a , " \\ ' ; <space> <tab>`` (unescaped and unbalanced quotes, escapes outside quotes, whitespace
  around quotes), read with Spark's default dialect or a user's ``quote``, ``escape``,
  ``charToEscapeQuoteEscaping``, ``nullValue``/``emptyValue``, ``ignoreLeading/TrailingWhiteSpace``,
  ``unescapedQuoteHandling`` (each of its five values) or ``sep``;
* ``multiline-json``: whole-file JSON documents (an object or an array of objects) read with
  ``multiLine=true``;
* ``parquet-schemas``: Parquet files whose schemas differ (an added column, a column of another
  width), read with ``mergeSchema`` unset, ``false`` or ``true``, inferred or with a user schema;

and a session time zone (``spark.sql.session.timeZone``, UTC or another) for the case. Tags in
``Case.features`` name what each case holds, as in ``cases.py``.
"""

from __future__ import annotations

import io
import json
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

from integration_tests.connectors.files.differential.cases import MODES, Case, FileSpec

TIME_ZONES = ("UTC", "UTC", "America/New_York")
JSON_SCHEMA = (
    "id BIGINT, ts TIMESTAMP, amount DECIMAL(10,2), nested STRUCT<a: INT, b: ARRAY<STRING>>, note STRING"
)
CSV_SCHEMA = "id INT, ts TIMESTAMP, amount DECIMAL(10,2), name STRING"

_TIMESTAMPS = (
    "2024-01-02T03:04:05",
    "2024-01-02 03:04:05",
    "2024-01-02T03:04:05.123",
    "2024-01-02T03:04:05.123456",
    "2024-01-02T03:04:05Z",
    "2024-01-02T03:04:05.5+01:00",
    "2024-01-02",
    "2024-13-02T03:04:05",
    "yesterday",
)
_DECIMALS_JSON = ("12.34", "-0.5", "7", "1e2", "12.345", "123456789012.5", '"3.25"')
_DECIMALS_CSV = ("12.34", "-0.5", "7", "1e2", "12.345", "123456789012.5", "x")
_NESTED = (
    '{"a": 1, "b": ["x", "y"]}',
    '{"a": null, "b": []}',
    '{"b": ["z"]}',
    "null",
    '{"a": "one", "b": ["x"]}',
    '{"a": 2, "b": "not an array"}',
)
_CSV_NAMES = ("plain", 'with "quote"', "back\\slash", "comma, inside", "")


_NOTES = ('"text"', "1e2", "-0.50", "7E+1", "[1, 2]", '{"k": [true, null]}', "true", "null", '"1e2"')
"""Values of a ``STRING`` column: a non-string one is its text as written in Spark (``1e2``)."""


def _json_record(draw: st.DrawFn, i: int) -> str:
    ts = draw(st.sampled_from(_TIMESTAMPS))
    amount = draw(st.sampled_from(_DECIMALS_JSON))
    nested = draw(st.sampled_from(_NESTED))
    note = draw(st.sampled_from(_NOTES))
    return f'{{"id": {i}, "ts": "{ts}", "amount": {amount}, "nested": {nested}, "note": {note}}}'


@st.composite
def _typed_json(draw: st.DrawFn) -> tuple[str, tuple[FileSpec, ...], set[str]]:
    tags: set[str] = set()
    files = []
    for f in range(draw(st.integers(1, 2))):
        lines = [_json_record(draw, 10 * f + i) for i in range(draw(st.integers(1, 4)))]
        if draw(st.booleans()):  # a top-level array of objects: one record per object in Spark
            at = draw(st.integers(0, len(lines)))
            lines.insert(at, "[" + ", ".join(_json_record(draw, 100 + 10 * f + k) for k in range(2)) + "]")
            tags.add("json-array-of-objects")
        files.append(FileSpec(f"part-{f}.json", ("\n".join(lines) + "\n").encode(), faulty=True))
    return "json", tuple(files), tags


def _csv_value(name: str, style: str) -> str:
    if style == "backslash":
        return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return '"' + name.replace('"', '""') + '"'  # doubled quotes (RFC 4180)


@st.composite
def _typed_csv(draw: st.DrawFn) -> tuple[str, tuple[FileSpec, ...], set[str]]:
    tags: set[str] = set()
    style = draw(st.sampled_from(["backslash", "backslash", "doubled"]))
    tags.add(f"csv-{style}")
    files = []
    for f in range(draw(st.integers(1, 2))):
        lines = []
        for i in range(draw(st.integers(1, 4))):
            name = draw(st.sampled_from(_CSV_NAMES))
            quoted = _csv_value(name, style) if draw(st.integers(0, 3)) else name.replace(",", ";")
            ts, amount = draw(st.sampled_from(_TIMESTAMPS)), draw(st.sampled_from(_DECIMALS_CSV))
            lines.append(f"{10 * f + i},{ts},{amount},{quoted}")
        files.append(FileSpec(f"part-{f}.csv", ("\n".join(lines) + "\n").encode(), faulty=True))
    return "csv", tuple(files), tags


_SPARK_WRITTEN = (
    "plain",
    'c "d"',
    "back\\slash",
    "comma, inside",
    "",
    'both\\"',
    "\\",
    '"',
    "x\\",
    "a\nb",
    "it's",
    '""',
    'a"b"c',
    None,
)
"""Values whose text Spark's CSV writer (default options) puts in a file (``_spark_written``)."""
_CSV_QUOTE_ALPHABET = ("a", "b", ",", '"', '"', "\\", " ", "'", ";", "\t")
CSV_DIALECTS: tuple[tuple[tuple[str, str], ...], ...] = (
    (),
    (),
    (("escape", '"'),),
    (("quote", "'"),),
    (("quote", "'"), ("escape", "'")),
    (("escape", "'"), ("charToEscapeQuoteEscaping", "\\")),
    (("nullValue", "a"), ("emptyValue", "b")),
    (("ignoreLeadingWhiteSpace", "true"), ("ignoreTrailingWhiteSpace", "true")),
    (("ignoreTrailingWhiteSpace", "true"), ("nullValue", "a"), ("emptyValue", "b")),
    (("unescapedQuoteHandling", "STOP_AT_CLOSING_QUOTE"),),
    (("unescapedQuoteHandling", "BACK_TO_DELIMITER"),),
    (("unescapedQuoteHandling", "SKIP_VALUE"),),
    (("unescapedQuoteHandling", "RAISE_ERROR"),),
    (("sep", ";"),),
    (("quote", ""),),
    (("escape", ""),),
)
"""Option sets of ``csv-quotes`` cases (Spark's defaults twice as often as each other)."""


def _spark_written(value: str | None) -> str:
    """``value`` as Spark's CSV writer writes it with its default options (checked against Spark 4)."""
    if value is None:
        return ""
    if value == "" or any(c in value for c in '",\n\r'):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


@st.composite
def _csv_quotes(draw: st.DrawFn) -> tuple[str, tuple[FileSpec, ...], set[str], dict[str, str]]:
    options = dict(draw(st.sampled_from(CSV_DIALECTS)))
    sep = options.get("sep", ",")
    tags = {"csv-dialect-" + ("+".join(f"{k}={v}" for k, v in sorted(options.items())) or "default")}
    files = []
    for f in range(draw(st.integers(1, 2))):
        lines = []
        for i in range(draw(st.integers(1, 6))):
            if draw(st.booleans()):
                values = [_spark_written(draw(st.sampled_from(_SPARK_WRITTEN))) for _ in range(2)]
                lines.append(sep.join([str(10 * f + i), *values]))
            else:
                chars = draw(st.lists(st.sampled_from(_CSV_QUOTE_ALPHABET), max_size=10))
                lines.append(f"{10 * f + i}{sep}" + "".join(chars))
        files.append(FileSpec(f"part-{f}.csv", ("\n".join(lines) + "\n").encode(), faulty=True))
    return "csv", tuple(files), tags, options


@st.composite
def _multiline_json(draw: st.DrawFn) -> tuple[str, tuple[FileSpec, ...], set[str]]:
    files = []
    for f in range(draw(st.integers(1, 2))):
        records = [{"id": 10 * f + i, "name": f"n{i}"} for i in range(draw(st.integers(1, 3)))]
        doc: Any = records if len(records) > 1 or draw(st.booleans()) else records[0]
        files.append(FileSpec(f"part-{f}.json", json.dumps(doc, indent=2).encode()))
    return "json", tuple(files), {"multiline-json"}


_PARQUET_SCHEMAS = {
    "base": pa.schema([("id", pa.int64()), ("name", pa.string())]),
    "added-column": pa.schema([("id", pa.int64()), ("name", pa.string()), ("extra", pa.float64())]),
    "narrow-id": pa.schema([("id", pa.int32()), ("name", pa.string())]),
    "typed": pa.schema(
        [
            ("id", pa.int64()),
            ("ts", pa.timestamp("us", tz="UTC")),
            ("amount", pa.decimal128(10, 2)),
            ("nested", pa.struct([("a", pa.int32()), ("b", pa.list_(pa.string()))])),
        ]
    ),
}


def parquet_bytes(kind: str, first: int, n: int) -> bytes:
    schema = _PARQUET_SCHEMAS[kind]
    rows: list[dict[str, Any]] = []
    for i in range(first, first + n):
        row: dict[str, Any] = {"id": i, "name": f"n{i}", "extra": i / 2}
        if kind == "typed":
            import datetime as dt

            row = {
                "id": i,
                "ts": dt.datetime(2024, 1, 2, 3, 4, i % 60, tzinfo=dt.UTC),
                "amount": Decimal(f"{i}.25"),
                "nested": {"a": i, "b": [f"x{i}"]},
            }
        rows.append({k: row[k] for k in schema.names})
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), buf)
    return buf.getvalue()


@st.composite
def _parquet_schemas(draw: st.DrawFn) -> tuple[str, tuple[FileSpec, ...], set[str]]:
    kinds = draw(
        st.sampled_from(
            [
                ("base", "added-column"),
                ("added-column", "base"),
                ("base", "narrow-id"),
                ("typed",),
                ("typed", "typed"),
            ]
        )
    )
    files = tuple(
        FileSpec(f"part-{f}.parquet", parquet_bytes(kind, 10 * f, draw(st.integers(1, 3))))
        for f, kind in enumerate(kinds)
    )
    tags = {"parquet-" + "+".join(kinds)}
    if len(set(kinds)) > 1:
        tags.add("parquet-schemas-differ")
    return "parquet", files, tags


@st.composite
def typed_cases(draw: st.DrawFn, streaming: bool = False) -> Case:
    """One case of typed values (see the module's docstring)."""
    kind = draw(
        st.sampled_from(
            [
                "typed-json",
                "typed-json",
                "typed-csv",
                "csv-quotes",
                "csv-quotes",
                "multiline-json",
                "parquet-schemas",
            ]
        )
    )
    options: dict[str, str] = {}
    if kind == "csv-quotes":
        fmt, files, tags, options = draw(_csv_quotes())
    else:
        fmt, files, tags = draw(
            {
                "typed-json": _typed_json(),
                "typed-csv": _typed_csv(),
                "multiline-json": _multiline_json(),
                "parquet-schemas": _parquet_schemas(),
            }[kind]
        )
    features = {kind, *tags}
    given = streaming or draw(st.booleans())
    schema: str | None = None
    if kind == "typed-json":
        schema = JSON_SCHEMA if given else None
    elif kind == "typed-csv":
        schema = CSV_SCHEMA if given else None
        if not given and draw(st.booleans()):  # Spark's type inference of timestamps, decimals, ...
            options["inferSchema"] = "true"
            features.add("infer-schema")
    elif kind == "csv-quotes":
        schema = "id INT, a STRING, b STRING" if given else None
    elif kind == "multiline-json":
        options["multiLine"] = "true"
        schema = "id BIGINT, name STRING" if given else None
    else:
        merge = draw(st.sampled_from([None, "false", "true"]))
        if merge is not None:
            options["mergeSchema"] = merge
            features.add(f"merge-schema-{merge}")
        if given:
            schema = draw(st.sampled_from(["id BIGINT, name STRING", "id BIGINT, name STRING, extra DOUBLE"]))
            if "parquet-typed" in tags or "parquet-typed+typed" in tags:
                schema = (
                    "id BIGINT, ts TIMESTAMP, amount DECIMAL(10,2), nested STRUCT<a: INT, b: ARRAY<STRING>>"
                )
    if fmt in ("json", "csv") and kind != "multiline-json":
        # csv-quotes: mostly PERMISSIVE, so that every line's values are compared (F1 hides them)
        quotes = kind == "csv-quotes"
        modes = (
            ("PERMISSIVE", "PERMISSIVE", "DROPMALFORMED", None) if quotes else (None, "PERMISSIVE", *MODES)
        )
        mode = draw(st.sampled_from(modes))
        if mode is not None:
            options["mode"] = mode
        features.add(f"mode-{(mode or 'default').lower()}")
    if not given:
        features.add("inferred")
    time_zone = draw(st.sampled_from(TIME_ZONES))
    if time_zone != "UTC":
        features.add("session-time-zone")
    return Case(
        fmt,
        files,
        schema,
        tuple(sorted(options.items())),
        streaming=streaming,
        features=frozenset(features),
        conf=(("spark.sql.session.timeZone", time_zone),),
    )
