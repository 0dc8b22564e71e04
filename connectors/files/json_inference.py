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
    NullType,
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


def _number(value: int | float) -> DataType:
    if isinstance(value, float):
        return DoubleType()
    if _LONG_MIN <= value <= _LONG_MAX:
        return LongType()
    digits = len(str(abs(value)))
    return DecimalType(digits, 0) if digits <= _MAX_PRECISION else DoubleType()


def _infer(value: Any) -> DataType:
    if value is None or value == "":
        return NullType()
    if isinstance(value, bool):
        return BooleanType()
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return StringType()
    if isinstance(value, dict):
        return StructType([StructField(k, _infer(v), True) for k, v in sorted(value.items())])
    element: DataType = NullType()
    for v in value:
        element = merge(element, _infer(v))
    return ArrayType(element, True)


def merge(a: DataType, b: DataType) -> DataType:
    """The type that holds values of ``a`` and of ``b`` (Spark's ``compatibleType``)."""
    if a == b:
        return a
    if isinstance(a, NullType):
        return b
    if isinstance(b, NullType):
        return a
    numeric = (LongType, DoubleType, DecimalType)
    if isinstance(a, numeric) and isinstance(b, numeric):
        if isinstance(a, DoubleType) or isinstance(b, DoubleType):
            return DoubleType()
        da = a if isinstance(a, DecimalType) else DecimalType(20, 0)
        db = b if isinstance(b, DecimalType) else DecimalType(20, 0)
        scale = max(da.scale, db.scale)
        whole = max(da.precision - da.scale, db.precision - db.scale)
        return DoubleType() if whole + scale > _MAX_PRECISION else DecimalType(whole + scale, scale)
    if isinstance(a, StructType) and isinstance(b, StructType):
        fields = {f.name: f.dataType for f in a.fields}
        for f in b.fields:
            fields[f.name] = merge(fields[f.name], f.dataType) if f.name in fields else f.dataType
        return StructType([StructField(n, t, True) for n, t in sorted(fields.items())])
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        return ArrayType(merge(a.elementType, b.elementType), True)
    return StringType()


def _canonical(t: DataType) -> DataType | None:
    """Undecided fields become strings, empty structs go (Spark's ``canonicalizeType``)."""
    if isinstance(t, NullType):
        return StringType()
    if isinstance(t, ArrayType):
        element = _canonical(t.elementType)
        return None if element is None else ArrayType(element, True)
    if isinstance(t, StructType):
        fields = []
        for f in t.fields:
            c = _canonical(f.dataType) if f.name else None
            if c is not None:
                fields.append(StructField(f.name, c, True))
        return StructType(fields) if fields else None
    return t


def _record_type(line: bytes) -> DataType:
    value = json.loads(line.decode("utf-8"))
    t = _infer(value)
    if isinstance(t, ArrayType):
        t = t.elementType
    if isinstance(t, StructType | NullType):
        return t
    raise _NotARecord(f"a JSON {type(value).__name__}, not an object")


def infer_jsonl(files: Iterable[tuple[str, bytes]], options: FileSourceOptions) -> StructType:
    """The schema of the ``(path, content)`` files, by Spark's rules (see the module docstring)."""
    root: DataType = StructType([])
    corrupt = False
    for path, data in files:
        start = 3 if data.startswith(UTF8_BOM) else 0
        view = memoryview(data)[start:]
        starts, ends = line_bounds(view)
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            line = bytes(view[s:e])
            if not line.strip():
                continue
            try:
                t = _record_type(line)
            except (ValueError, RecursionError) as error:
                if options.mode is ParseMode.FAILFAST:
                    raise MalformedRecordError(
                        f"malformed jsonl record in file {path} at byte offset {start + s} while inferring "
                        f"the schema: {error} (line starts with {line[:200].decode('utf-8', 'replace')!r}); "
                        f"give a schema, or set option mode to DROPMALFORMED or PERMISSIVE"
                    ) from None
                corrupt = True
                continue
            root = merge(root, t)
    schema = _canonical(root)
    fields = list(schema.fields) if isinstance(schema, StructType) else []
    name = options.corrupt_column
    if corrupt and options.mode is ParseMode.PERMISSIVE and name not in {f.name for f in fields}:
        fields = sorted([*fields, StructField(name, StringType(), True)], key=lambda f: f.name)
    return StructType(fields)
