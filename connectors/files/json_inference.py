"""The ``jsonl`` schema when the user gives none, inferred by the rules of Spark's ``json`` source.

Every line of every file counts (Spark's default ``samplingRatio=1.0``): a field that first
appears in the last file is still a column. Per record: an object is a struct with its fields
sorted by name, integers are ``bigint`` (``decimal(p,0)`` beyond a long, ``double`` beyond 38
digits), fractions ``double``, booleans ``boolean``, other strings ``string``, empty strings and
nulls undecided; a top-level array holds records. Records merge field by field: ``bigint`` and
``double`` give ``double``, decimals widen, structs and arrays merge recursively, anything else
gives ``string``; a field never decided is ``string``. A malformed line (not JSON, not an object,
invalid UTF-8) follows ``mode``: ``PERMISSIVE`` adds the corrupt-record column, ``DROPMALFORMED``
ignores the line, ``FAILFAST`` fails naming the file and byte offset.

Written by hand with the standard ``json`` module: pyarrow's inference keeps fields in order of
appearance, types timestamps and refuses conflicting types, where Spark's rules widen to string.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DecimalType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from connector_base import MalformedRecordError
from connectors.files.formats.base import UTF8_BOM, line_bounds
from connectors.files.options import FileSourceOptions, ParseMode

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_MAX_PRECISION = 38


class _NotARecord(ValueError):
    """A line that is JSON but not an object (nor an array of objects)."""


# Types are inferred as small tuples ("signatures") and turned into Spark types once at the end:
# building and comparing pyspark DataType objects per line costs ten times more.
_NULL, _BOOL, _LONG, _DOUBLE, _STRING = ("null",), ("boolean",), ("bigint",), ("double",), ("string",)
Sig = tuple[Any, ...]


def _number(value: int | float) -> Sig:
    if isinstance(value, float):
        return _DOUBLE
    if _LONG_MIN <= value <= _LONG_MAX:
        return _LONG
    digits = len(str(abs(value)))
    return ("decimal", digits, 0) if digits <= _MAX_PRECISION else _DOUBLE


def _infer(value: Any) -> Sig:
    if value is None or value == "":
        return _NULL
    if value is True or value is False:
        return _BOOL
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return _STRING
    if isinstance(value, dict):
        return ("struct", tuple(sorted((k, _infer(v)) for k, v in value.items())))
    element = _NULL
    for v in value:
        element = merge(element, _infer(v))
    return ("array", element)


def merge(a: Sig, b: Sig) -> Sig:
    """The type that holds values of ``a`` and of ``b`` (Spark's ``compatibleType``)."""
    if a == b:
        return a
    if a is _NULL or a == _NULL:
        return b
    if b == _NULL:
        return a
    numeric = ("bigint", "double", "decimal")
    if a[0] in numeric and b[0] in numeric:
        if _DOUBLE in (a, b):
            return _DOUBLE
        pa_, sa = (a[1], a[2]) if a[0] == "decimal" else (20, 0)
        pb, sb = (b[1], b[2]) if b[0] == "decimal" else (20, 0)
        scale = max(sa, sb)
        whole = max(pa_ - sa, pb - sb)
        return _DOUBLE if whole + scale > _MAX_PRECISION else ("decimal", whole + scale, scale)
    if a[0] == b[0] == "struct":
        fields = dict(a[1])
        for name, t in b[1]:
            fields[name] = merge(fields[name], t) if name in fields else t
        return ("struct", tuple(sorted(fields.items())))
    if a[0] == b[0] == "array":
        return ("array", merge(a[1], b[1]))
    return _STRING


def _spark_type(sig: Sig) -> DataType | None:
    """The Spark type of ``sig``: undecided fields become strings, empty structs go (Spark's
    ``canonicalizeType``)."""
    match sig[0]:
        case "null" | "string":
            return StringType()
        case "boolean":
            return BooleanType()
        case "bigint":
            return LongType()
        case "double":
            return DoubleType()
        case "decimal":
            return DecimalType(sig[1], sig[2])
        case "array":
            element = _spark_type(sig[1])
            return None if element is None else ArrayType(element, True)
        case _:
            fields = []
            for name, t in sig[1]:
                c = _spark_type(t) if name else None
                if c is not None:
                    fields.append(StructField(name, c, True))
            return StructType(fields) if fields else None


def _record_type(line: bytes) -> Sig:
    value = json.loads(line.decode("utf-8"))
    t = _infer(value)
    if t[0] == "array":
        t = t[1]
    if t[0] in ("struct", "null"):
        return t
    raise _NotARecord(f"a JSON {type(value).__name__}, not an object")


def _bulk_types(lines: list[bytes]) -> list[Sig] | None:
    """The record types of ``lines`` parsed in one ``json.loads`` call (several times faster than
    one call per line), or ``None`` when a line is not one JSON record."""
    try:
        values = json.loads(b"[" + b",".join(lines) + b"]")
    except (ValueError, RecursionError):
        return None
    if len(values) != len(lines):
        return None
    out = []
    for value in values:
        t = _infer(value)
        if t[0] == "array":
            t = t[1]
        if t[0] not in ("struct", "null"):
            return None
        out.append(t)
    return out


def infer_jsonl(
    files: Iterable[tuple[str, Iterable[tuple[int, bytes]]]], options: FileSourceOptions
) -> StructType:
    """The schema of the files, each given as its path and its ``(offset, bytes)`` chunks of whole
    lines, by Spark's rules (see the module docstring)."""
    root: Sig = ("struct", ())
    seen: set[Sig] = set()
    corrupt = False
    for path, offset, data in ((p, o, d) for p, chunks in files for o, d in chunks):
        start = 3 if offset == 0 and data.startswith(UTF8_BOM) else 0
        view = memoryview(data)[start:]
        starts, ends = line_bounds(view)
        lines = [(s, bytes(view[s:e])) for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
        lines = [(s, line) for s, line in lines if line.strip()]
        types = _bulk_types([line for _s, line in lines])
        if types is None:  # a malformed line somewhere: line by line, following mode
            types = []
            for s, line in lines:
                try:
                    types.append(_record_type(line))
                except (ValueError, RecursionError) as error:
                    if options.mode is ParseMode.FAILFAST:
                        preview = line[:200].decode("utf-8", "replace")
                        at = offset + start + s
                        raise MalformedRecordError(
                            f"malformed jsonl record in file {path} at byte offset {at} while "
                            f"inferring the schema: {error} (line starts with {preview!r}); give a schema, "
                            f"or set option mode to DROPMALFORMED or PERMISSIVE"
                        ) from None
                    corrupt = True
        for t in types:
            if t not in seen:  # most records share a few shapes: merge each shape once
                seen.add(t)
                root = merge(root, t)
    schema = _spark_type(root)
    fields = list(schema.fields) if isinstance(schema, StructType) else []
    name = options.corrupt_column
    if corrupt and options.mode is ParseMode.PERMISSIVE and name not in {f.name for f in fields}:
        fields = sorted([*fields, StructField(name, StringType(), True)], key=lambda f: f.name)
    return StructType(fields)
