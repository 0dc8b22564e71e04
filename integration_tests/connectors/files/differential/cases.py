"""Generated inputs of the files differential harness: a ``Case`` is files on disk plus one read.

A case is drawn by hypothesis (``cases()``), then written under a fresh directory by
``Case.materialize``. Everything that makes a file unusual is recorded in ``Case.features`` (a set
of short tags such as ``bom``, ``lone-cr``, ``bz2``, ``truncated-gzip``), so that an allowed
difference can be told apart from a new one by the tags of the input that shows it, not by the
text of an error.
"""

from __future__ import annotations

import bz2
import codecs
import csv
import gzip
import io
import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

FORMATS = ("text", "json", "csv", "parquet")
OURS_FORMAT = {"text": "text", "json": "jsonl", "csv": "csv", "parquet": "parquet"}
"""Spark's format name -> files-unified's ``format`` option."""
SUFFIX = {"text": ".txt", "json": ".json", "csv": ".csv", "parquet": ".parquet"}
MODES = ("PERMISSIVE", "DROPMALFORMED", "FAILFAST")
CORRUPT = "_corrupt_record"
SCHEMAS = {
    "text": "value STRING",
    "json": "id BIGINT, name STRING",
    "csv": "id INT, name STRING",
    "parquet": "id BIGINT, name STRING",
}
"""The user schema of each format when a case gives one (``_corrupt_record STRING`` may follow)."""
SPARK_ONLY_OPTIONS: tuple[tuple[str, str], ...] = ()
"""Options of Spark's file sources that files-unified does not take (it refuses them at ``load()``)."""
SPARK_ONLY_FOR_FORMAT = {"json": (("timestampFormat", "yyyy-MM-dd HH:mm:ss"),)}
"""Options files-unified refuses for one format (json's date and timestamp formats)."""
LINE_SEPS = {
    "text": ("\n", "\r\n", ";", "|", "ab", "é", ""),
    "json": ("\n", "\r\n", ";", "|", "ab", "é", ""),
    "csv": ("\n", "\r\n", ";", "|", "ab", "", "abc"),
}
"""``lineSep`` values (the empty one invalid, csv's 3 characters too); a case's lines are mostly
joined by it (``linesep-joined``), sometimes by the usual line ends (``linesep-other``)."""
_ROW_CHARSETS = (
    "UTF-8",
    "utf-8",
    "ISO-8859-1",
    "UTF-16LE",
    "UTF-16BE",
    "us-ascii",
    "UTF-16",
    "UTF-32",
    "latin1",
    "bogus",
)
CHARSETS = {
    "text": ("UTF-16LE", "ISO-8859-1", "latin1", "UTF-8", "bogus"),
    "json": _ROW_CHARSETS,
    "csv": _ROW_CHARSETS,
}
"""``encoding`` / ``charset`` values (Spark 4 takes the first eight for json and csv; text takes
any Java charset, used only to encode ``lineSep``); the files are written in it."""
INFER_SCHEMA = ("true", "true", "false", "yes")
"""csv ``inferSchema`` values (the last invalid; other formats ignore the option, as Spark's)."""
SAMPLING_RATIOS = ("1.0", "1", "2", "0.5", "0", "abc")
"""``samplingRatio`` values; ``0.5`` only with a user schema (where nothing is sampled): Spark's
sample is random, files-unified's deterministic, so an inferred schema may differ (docs/files.md)."""
_BYTE_CHARSETS = {"utf-8", "iso-8859-1", "latin1", "us-ascii", "bogus"}
"""Charsets whose files still get a stray invalid byte or a UTF-8 byte-order mark."""
PATH_GLOB_FILTERS = ("part-*", "*{suffix}", "{{part-0,part-2}}*", "part-[01]*", "[!p]*", "part-?.*", "[x")
"""``pathGlobFilter`` values (``{suffix}``: the format's; a compressed file's name ends otherwise;
the last one is invalid)."""
RECURSIVE_FILE_LOOKUP = ("true", "true", "false", "yes")
MODIFIED_TIMES = (
    "2023-11-14T22:13:20",
    "2023-11-14T22:13:20.5",
    "2023-11-14 22:13:21",
    "2023-11-14T22:13:21Z",
    "2023-11-14T23:13:21+01:00",
    "2023-11-14",
    "2023",
    "2023-11-14T",
    "yesterday",
)
"""``modifiedBefore`` / ``modifiedAfter`` values around the files' times (1700000000 + i seconds,
2023-11-14T22:13:20Z + i), some in another zone, two invalid."""
MULTILINE_NOISE = (("multiLine", "true"), ("multiLine", "false"))
"""``multiLine`` set where it changes nothing (text, parquet; json/csv lines with ``false``)."""
NAME_ALPHABET = "abé😀 "
"""Characters of generated string values: ASCII, two- and four-byte UTF-8, a space."""


@dataclass(frozen=True)
class FileSpec:
    """One file of a case: its path below the case's root and its bytes."""

    rel: str
    data: bytes
    faulty: bool = False
    """Whether the file holds a malformed record or is corrupt (a FAILFAST error must name it)."""


@dataclass(frozen=True)
class Case:
    """Files, and one read of them through Spark's ``fmt`` source and through files-unified."""

    fmt: str
    files: tuple[FileSpec, ...]
    schema: str | None
    options: tuple[tuple[str, str], ...]
    """Spark option names; only those files-unified gives the same meaning (see ``ours_options``)."""
    glob: str | None = None
    """``None``: read the root directory; else this glob below the root."""
    partitioned: bool = False
    streaming: bool = False
    max_files_per_trigger: int | None = None
    features: frozenset[str] = field(default_factory=frozenset)
    conf: tuple[tuple[str, str], ...] = ()
    """Spark session settings both reads run under (``spark.sql.session.timeZone``)."""

    @property
    def option_map(self) -> dict[str, str]:
        """The options as a dict."""
        return dict(self.options)

    def path(self, root: Path) -> str:
        """The path both reads load."""
        return str(root / self.glob) if self.glob else str(root)

    def ours_options(self) -> dict[str, str]:
        """files-unified's options for the same read."""
        opts = {"format": OURS_FORMAT[self.fmt], **self.option_map}
        if self.partitioned:
            opts["recursive"] = "true"  # Spark discovers key=value directories; ours reads them recursively
        if self.max_files_per_trigger is not None:
            opts["maxFilesPerTrigger"] = str(self.max_files_per_trigger)
        return opts

    def spark_options(self) -> dict[str, str]:
        """Spark's options for the read."""
        opts = dict(self.option_map)
        if self.max_files_per_trigger is not None:
            opts["maxFilesPerTrigger"] = str(self.max_files_per_trigger)
        return opts

    def materialize(self, root: Path) -> None:
        """Write the files under ``root``, with modification times one second apart in case order."""
        root.mkdir(parents=True, exist_ok=True)
        base = 1_700_000_000
        for i, f in enumerate(self.files):
            target = root / f.rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.data)
            os.utime(target, (base + i, base + i))

    def faulty_files(self) -> list[str]:
        """Base names of the files with a malformed record or corrupt bytes."""
        return [os.path.basename(f.rel) for f in self.files if f.faulty]

    def describe(self) -> str:
        """A one-line summary (for reports and failure messages)."""
        files = ", ".join(f"{f.rel}({len(f.data)}B{', faulty' if f.faulty else ''})" for f in self.files)
        return (
            f"{'stream' if self.streaming else 'batch'} {self.fmt} schema={self.schema!r} "
            f"options={self.option_map} glob={self.glob!r} partitioned={self.partitioned} "
            f"maxFilesPerTrigger={self.max_files_per_trigger} features={sorted(self.features)} "
            f"{'conf=' + str(dict(self.conf)) + ' ' if self.conf else ''}"
            f"files=[{files}]"
        )


# --- records and their rendering ------------------------------------------------------------

_names = st.text(alphabet=NAME_ALPHABET, min_size=0, max_size=6)
_ids = st.one_of(st.integers(-5, 1000), st.integers(2**31, 2**40))
_records = st.lists(st.fixed_dictionaries({"id": _ids, "name": _names}), min_size=0, max_size=6)

_JSON_BAD = {
    "json-truncated": '{"id": 1, "name": ',
    "json-not-json": "not json",
    "json-type-mismatch": '{"id": "x", "name": "kept"}',
    "json-fraction": '{"id": 1.5, "name": "kept"}',
    "json-top-array": "[1, 2]",
    "json-null": "null",
}
_JSON_LENIENT = {
    "json-single-quotes": "{'id': 11, 'name': 'it\\'s \"q\"'}",
    "json-comment": '{"id": 12, /* c */ "name": "c"} // tail',
    "json-unquoted-names": '{id: 13, name: "u", $x_1: [1]}',
    "json-leading-zeros": '{"id": 0014, "name": 007}',
    "json-any-escape": '{"id": 15, "name": "a\\qb"}',
    "json-control-char": '{"id": 16, "name": "t\tb"}',
    "json-non-numeric": '{"id": 17, "name": +INF}',
}
"""JSON lines that Spark's parser reads when its ``allow...`` option is on (single quotes: by default)."""
JSON_PARSER_OPTIONS = (
    "allowSingleQuotes",
    "allowComments",
    "allowUnquotedFieldNames",
    "allowNumericLeadingZeros",
    "allowBackslashEscapingAnyCharacter",
    "allowUnquotedControlChars",
    "prefersDecimal",
    "primitivesAsString",
    "dropFieldIfAllNull",
    "allowNonNumericNumbers",
)
_CSV_BAD = {
    "csv-extra-field": "7,a,extra",
    "csv-missing-field": "8",
    "csv-type-mismatch": "x,kept",
}


def _json_lines(records: list[dict[str, Any]], bad: list[str], multiline: bool) -> list[str]:
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    if multiline and records:  # a pretty-printed record spans several lines (Spark's multiLine=false)
        lines[0:1] = json.dumps(records[0], indent=1, ensure_ascii=False).split("\n")
    return lines + [_JSON_BAD.get(b) or _JSON_LENIENT[b] for b in bad]


def _csv_lines(records: list[dict[str, Any]], bad: list[str], header: bool, multiline: bool) -> list[str]:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    rows = [[r["id"], r["name"]] for r in records]
    if multiline and rows:
        rows[0][1] = f"{rows[0][1]}\nsecond line"  # quoted value with a newline (Spark's multiLine=false)
    writer.writerows(rows)
    body = buf.getvalue().split("\n")[:-1] if rows else []
    return (["id,name"] if header else []) + body + [_CSV_BAD[b] for b in bad]


def encode(text: str, charset: str | None) -> bytes:
    """``text`` in ``charset`` as Java writes it (``UTF-16``: a big-endian byte-order mark first);
    UTF-8 for none or a name no charset has."""
    low = (charset or "utf-8").lower()
    if low == "utf-16":
        return codecs.BOM_UTF16_BE + text.encode("utf-16-be")
    codec = {"iso-8859-1": "latin-1", "us-ascii": "ascii", "utf-32": "utf-32-be"}.get(low, low)
    try:
        codecs.lookup(codec)
    except LookupError:
        codec = "utf-8"
    return text.encode(codec, "replace")


@st.composite
def _line_file(
    draw: st.DrawFn,
    fmt: str,
    header: bool,
    index: int,
    line_sep: str | None = None,
    charset: str | None = None,
) -> tuple[bytes, set[str], bool]:
    """The bytes of one row-format file (before compression), its feature tags, and whether it is faulty."""
    tags: set[str] = set()
    records = draw(_records)
    multiline = draw(st.booleans()) and draw(st.booleans())
    if fmt == "json":
        bad = draw(st.lists(st.sampled_from(sorted(_JSON_BAD)), max_size=2))
        if draw(st.integers(0, 3)) == 0:  # a line that needs one of the parser's allow... options
            bad.append(draw(st.sampled_from(sorted(_JSON_LENIENT))))
        lines = _json_lines(records, bad, multiline)
    elif fmt == "csv":
        bad = draw(st.lists(st.sampled_from(sorted(_CSV_BAD)), max_size=2))
        lines = _csv_lines(records, bad, header, multiline)
    else:
        bad = []
        lines = [r["name"] for r in records]
    if multiline and records:
        tags.add("multiline")
    tags.update(bad)
    if draw(st.booleans()):
        pos = draw(st.integers(0, len(lines)))
        lines.insert(pos, "")
        tags.add("blank-line")
    if line_sep and draw(st.sampled_from([True, True, True, False])):
        sep = line_sep
        tags.add("linesep-joined")
    else:
        sep = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
        tags.add({"\n": "lf", "\r\n": "crlf", "\r": "lone-cr"}[sep])
        if line_sep:
            tags.add("linesep-other")
    text = sep.join(lines)
    if lines and draw(st.booleans()):
        text += sep
    data = encode(text, charset) if fmt != "text" else encode(text, charset if line_sep else None)
    faulty = bool(bad) or "multiline" in tags
    if (charset or "utf-8").lower() not in _BYTE_CHARSETS:
        pass  # a stray byte or a UTF-8 mark would only cut a multi-byte charset's characters
    elif data and draw(st.integers(0, 5)) == 0:
        at = data.find(b"a")
        if at >= 0:  # an invalid UTF-8 byte inside a value
            data = data[:at] + b"\xff" + data[at + 1 :]
            tags.add("invalid-utf8")
            faulty = faulty or fmt != "text"
    if (charset or "utf-8").lower() in _BYTE_CHARSETS and draw(st.integers(0, 5)) == 0:
        data = b"\xef\xbb\xbf" + data
        tags.add("bom")
        faulty = faulty or (header and fmt == "csv")
    if not data:
        tags.add("empty-file")
    return data, tags, faulty


@st.composite
def _json_document(draw: st.DrawFn, charset: str | None = None) -> tuple[bytes, set[str], bool]:
    """The bytes of one ``multiLine`` JSON file (a document, blank, or malformed), tags, faulty."""
    records = draw(_records)
    kind = draw(
        st.sampled_from(
            ["object", "array", "array", "trailing", "blank"]
            + ["json-truncated", "json-not-json", "json-top-array", "json-type-mismatch", "json-null"]
        )
    )
    indent = draw(st.sampled_from([None, 1]))
    tags = {f"doc-{kind}"}
    faulty = kind.startswith("json-")
    if kind == "object":
        text = json.dumps(records[0] if records else {}, indent=indent, ensure_ascii=False)
    elif kind in ("array", "trailing"):
        text = json.dumps(records, indent=indent, ensure_ascii=False)
        if kind == "trailing":  # Spark reads the first document and ignores the rest
            text += "\n" + json.dumps({"id": 999, "name": "after"}) + "\nnot json"
    elif kind == "blank":
        text = draw(st.sampled_from(["", " \n", "\n\n"]))
    elif kind == "json-type-mismatch":
        text = json.dumps([*records, {"id": "x", "name": "kept"}], indent=indent, ensure_ascii=False)
    else:
        text = _JSON_BAD[kind]
    data = encode(text, charset)
    if (charset or "utf-8").lower() not in _BYTE_CHARSETS:
        pass
    elif data and draw(st.integers(0, 5)) == 0:
        at = data.find(b"a")
        if at >= 0:
            data = data[:at] + b"\xff" + data[at + 1 :]
            tags.add("invalid-utf8")
            faulty = True
    if draw(st.integers(0, 5)) == 0:
        data = b"\xef\xbb\xbf" + data
        tags.add("bom")
    if not data:
        tags.add("empty-file")
    return data, tags, faulty


def _compress(draw: st.DrawFn, data: bytes, tags: set[str]) -> tuple[bytes, str, bool]:
    codec = draw(st.sampled_from(["none", "none", "none", "none", "gzip", "gzip", "bz2", "bz2", "deflate"]))
    if codec == "none":
        return data, "", False
    tags.add(codec)
    pack, suffix = {
        "gzip": (lambda b: gzip.compress(b, mtime=0), ".gz"),
        "bz2": (bz2.compress, ".bz2"),
        "deflate": (zlib.compress, ".deflate"),
    }[codec]
    packed = pack(data)
    damage = draw(st.sampled_from(["none", "none", "none", "truncated", "garbage"]))
    if damage == "truncated" and len(packed) > 12:
        tags.add(f"truncated-{codec}")
        return packed[: len(packed) - draw(st.integers(4, min(12, len(packed) - 1)))], suffix, True
    if damage == "garbage":
        tags.add(f"not-{codec}")
        return b"this is not compressed\n", suffix, True
    return packed, suffix, False


@st.composite
def _parquet_file(draw: st.DrawFn) -> tuple[bytes, set[str], bool]:
    records = draw(_records)
    tags: set[str] = set()
    table = pa.Table.from_pylist(records, schema=pa.schema([("id", pa.int64()), ("name", pa.string())]))
    buf = io.BytesIO()
    pq.write_table(table, buf, row_group_size=draw(st.integers(1, 4)))
    data = buf.getvalue()
    damage = draw(st.sampled_from(["none"] * 6 + ["truncated", "garbage", "empty"]))
    if damage == "truncated":
        tags.add("truncated-parquet")
        return data[: len(data) // 2], tags, True
    if damage == "garbage":
        tags.add("corrupt-parquet")
        return b"PAR1 this is not parquet", tags, True
    if damage == "empty":
        tags.add("empty-file")
        return b"", tags, False
    return data, tags, False


_ONE_IN_8 = st.sampled_from([False] * 7 + [True])
_ONE_IN_10 = st.sampled_from([False] * 9 + [True])
"""Rare draws (hypothesis favours the first element; ``integers(...) == 0`` would be frequent)."""


@st.composite
def cases(draw: st.DrawFn, streaming: bool = False) -> Case:
    """One generated case: a format, 1-3 files (some odd), a schema or none, and the options."""
    fmt = draw(st.sampled_from(FORMATS))
    features: set[str] = set()
    options: dict[str, str] = {}
    given = streaming or draw(st.booleans())
    schema = SCHEMAS[fmt] if given else None
    if fmt in ("json", "csv"):
        mode = draw(st.sampled_from((None, *MODES)))
        if mode is not None:
            options["mode"] = mode
        features.add(f"mode-{(mode or 'default').lower()}")
        if given and draw(st.booleans()):
            schema = f"{schema}, {CORRUPT} STRING"
            features.add("corrupt-column")
    header = fmt == "csv" and draw(st.booleans())
    if header:
        options["header"] = "true"
        features.add("header")
    documents = fmt == "json" and draw(st.booleans())
    if documents:
        options["multiLine"] = "true"
        features.add("multiline-json")
    if fmt == "csv" and draw(st.sampled_from([False, False, True])):  # quoted values may span lines
        options["multiLine"] = "true"
        features.add("multiline-csv")
    line_sep = charset = None
    if fmt != "parquet" and draw(st.sampled_from([False] * 5 + [True])):
        line_sep = draw(st.sampled_from(LINE_SEPS[fmt]))
        options["lineSep"] = line_sep
        features.add("line-sep")
    if fmt != "parquet" and draw(st.sampled_from([False] * 6 + [True])):
        charset = draw(st.sampled_from(CHARSETS[fmt]))
        key = "charset" if fmt != "text" and draw(st.sampled_from([False, False, True])) else "encoding"
        options[key] = charset
        features.add("encoding")
    if fmt == "json" and draw(st.integers(0, 2)) == 0:
        for name in draw(st.lists(st.sampled_from(JSON_PARSER_OPTIONS), min_size=1, max_size=3, unique=True)):
            options[name] = draw(st.sampled_from(["true", "false"]))
        features.add("json-allow-options")
    partitioned = draw(st.integers(0, 4)) == 0
    count = draw(st.integers(1, 3))
    files: list[FileSpec] = []
    for i in range(count):
        if fmt == "parquet":
            data, tags, faulty = draw(_parquet_file())
            suffix = ""
        else:
            data, tags, faulty = draw(
                _json_document(charset) if documents else _line_file(fmt, header, i, line_sep, charset)
            )
            data, suffix, damaged = _compress(draw, data, tags)
            faulty = faulty or damaged
        features.update(tags)
        name = f"part-{i}{SUFFIX[fmt]}{suffix}"
        rel = f"p={draw(st.sampled_from(['1', '2', 'x']))}/{name}" if partitioned else name
        files.append(FileSpec(rel, data, faulty))
    if partitioned:
        features.add("partitioned")
        if any(f.rel.startswith("p=x") for f in files):
            features.add("partition-string")
    if draw(_ONE_IN_8):
        options["pathGlobFilter"] = draw(st.sampled_from(PATH_GLOB_FILTERS)).format(suffix=SUFFIX[fmt])
        features.add("path-glob-filter")
    if draw(st.sampled_from([False, False, False, True])):  # corrupt files are common in the cases
        options["ignoreCorruptFiles"] = draw(st.sampled_from(["true", "true", "false", "yes"]))
        features.add("ignore-corrupt-files")
    if draw(_ONE_IN_10):  # no file goes missing here: the values are checked, "yes" refused
        options["ignoreMissingFiles"] = draw(st.sampled_from(["true", "false", "yes"]))
        features.add("ignore-missing-files")
    if draw(_ONE_IN_8):
        options["recursiveFileLookup"] = draw(st.sampled_from(RECURSIVE_FILE_LOOKUP))
        features.add("recursive-file-lookup")
    if draw(_ONE_IN_8):
        for key in draw(
            st.sampled_from([("modifiedBefore",), ("modifiedAfter",), ("modifiedAfter", "modifiedBefore")])
        ):
            options[key] = draw(st.sampled_from(MODIFIED_TIMES))
        if draw(st.booleans()):
            options["timeZone"] = draw(st.sampled_from(["America/New_York", "+01:00", "UTC"]))
        features.add("modified-time")
    glob = None
    if not partitioned:
        glob = draw(st.sampled_from([None, None, None, "part-*", "*.nomatch"]))
        if glob == "*.nomatch":
            features.add("glob-no-match")
        elif glob:
            features.add("glob")
    if not given:
        features.add("inferred")
    max_files = draw(st.sampled_from([None, 1, 2])) if streaming else None
    if streaming and draw(st.booleans()):
        options["latestFirst"] = "true"
        features.add("latest-first")
    if fmt == "csv" and draw(st.sampled_from([False] * 3 + [True])):
        options["inferSchema"] = draw(st.sampled_from(INFER_SCHEMA))
        features.add("infer-schema")
    if draw(_ONE_IN_8):
        ratio = draw(st.sampled_from(SAMPLING_RATIOS))
        if ratio != "0.5" or given:
            options["samplingRatio"] = ratio
            features.add("sampling-ratio")
    refused = SPARK_ONLY_OPTIONS + SPARK_ONLY_FOR_FORMAT.get(fmt, ())
    if not streaming and refused and draw(st.sampled_from([False] * 9 + [True])):  # rare: masks the rest
        key, value = draw(st.sampled_from(refused))
        options[key] = value
        features.add("spark-only-option")
    elif not documents and "multiline-csv" not in features and draw(_ONE_IN_10):
        key, value = draw(st.sampled_from(MULTILINE_NOISE))
        if not (fmt == "csv" and value == "true"):
            options[key] = value
            features.add("multiline-noise")
    return Case(
        fmt,
        tuple(files),
        schema,
        tuple(sorted(options.items())),
        glob,
        partitioned,
        streaming,
        max_files,
        frozenset(features),
    )
