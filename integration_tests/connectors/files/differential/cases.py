"""Generated inputs of the files differential harness: a ``Case`` is files on disk plus one read.

A case is drawn by hypothesis (``cases()``), then written under a fresh directory by
``Case.materialize``. Everything that makes a file unusual is recorded in ``Case.features`` (a set
of short tags such as ``bom``, ``lone-cr``, ``bz2``, ``truncated-gzip``), so that an allowed
difference can be told apart from a new one by the tags of the input that shows it, not by the
text of an error.
"""

from __future__ import annotations

import bz2
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
SPARK_ONLY_OPTIONS = (
    ("multiLine", "true"),
    ("lineSep", "\n"),
    ("encoding", "UTF-8"),
    ("pathGlobFilter", "*"),
    ("recursiveFileLookup", "true"),
    ("ignoreCorruptFiles", "true"),
)
"""Options of Spark's file sources that files-unified does not take (it refuses them at ``load()``)."""
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
}
_CSV_BAD = {
    "csv-extra-field": "7,a,extra",
    "csv-missing-field": "8",
    "csv-type-mismatch": "x,kept",
}


def _json_lines(records: list[dict[str, Any]], bad: list[str], multiline: bool) -> list[str]:
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    if multiline and records:  # a pretty-printed record spans several lines (Spark's multiLine=false)
        lines[0:1] = json.dumps(records[0], indent=1, ensure_ascii=False).split("\n")
    return lines + [_JSON_BAD[b] for b in bad]


def _csv_lines(records: list[dict[str, Any]], bad: list[str], header: bool, multiline: bool) -> list[str]:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    rows = [[r["id"], r["name"]] for r in records]
    if multiline and rows:
        rows[0][1] = f"{rows[0][1]}\nsecond line"  # quoted value with a newline (Spark's multiLine=false)
    writer.writerows(rows)
    body = buf.getvalue().split("\n")[:-1] if rows else []
    return (["id,name"] if header else []) + body + [_CSV_BAD[b] for b in bad]


@st.composite
def _line_file(draw: st.DrawFn, fmt: str, header: bool, index: int) -> tuple[bytes, set[str], bool]:
    """The bytes of one row-format file (before compression), its feature tags, and whether it is faulty."""
    tags: set[str] = set()
    records = draw(_records)
    multiline = draw(st.booleans()) and draw(st.booleans())
    if fmt == "json":
        bad = draw(st.lists(st.sampled_from(sorted(_JSON_BAD)), max_size=2))
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
    sep = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    tags.add({"\n": "lf", "\r\n": "crlf", "\r": "lone-cr"}[sep])
    text = sep.join(lines)
    if lines and draw(st.booleans()):
        text += sep
    data = text.encode("utf-8")
    faulty = bool(bad) or "multiline" in tags
    if data and draw(st.integers(0, 5)) == 0:
        at = data.find(b"a")
        if at >= 0:  # an invalid UTF-8 byte inside a value
            data = data[:at] + b"\xff" + data[at + 1 :]
            tags.add("invalid-utf8")
            faulty = faulty or fmt != "text"
    if draw(st.integers(0, 5)) == 0:
        data = b"\xef\xbb\xbf" + data
        tags.add("bom")
        faulty = faulty or (header and fmt == "csv")
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
    partitioned = draw(st.integers(0, 4)) == 0
    count = draw(st.integers(1, 3))
    files: list[FileSpec] = []
    for i in range(count):
        if fmt == "parquet":
            data, tags, faulty = draw(_parquet_file())
            suffix = ""
        else:
            data, tags, faulty = draw(_line_file(fmt, header, i))
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
    if not streaming and draw(st.sampled_from([False] * 9 + [True])):  # rare: it masks the rest of the case
        key, value = draw(st.sampled_from(SPARK_ONLY_OPTIONS))
        options[key] = value
        features.add("spark-only-option")
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
