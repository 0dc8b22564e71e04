"""The ``jsonl`` schema when the user gives none, inferred by the rules of Spark's ``json`` source.

Every line of every file counts (Spark's default ``samplingRatio=1.0``): a field that first
appears in the last file is still a column; with a smaller ``samplingRatio``, the lines (or
``multiLine`` files) of ``InferenceSample``. Per record: an object is a struct with its fields
sorted by name, integers are ``bigint`` (``decimal(p,0)`` beyond a long, ``double`` beyond 38
digits), fractions ``double``, booleans ``boolean``, other strings ``string``, empty strings and
nulls undecided; a top-level array holds records. Records merge field by field: ``bigint`` and
``double`` give ``double``, decimals widen, structs and arrays merge recursively, anything else
gives ``string``; a field never decided is ``string``. A malformed line (not JSON, not an object,
invalid UTF-8) follows ``mode``: ``PERMISSIVE`` adds the corrupt-record column, ``DROPMALFORMED``
ignores the line, ``FAILFAST`` fails naming the file and byte offset.

With ``multiLine=true`` each file is one JSON document (``infer_json_documents``): an object or
an array of objects; what follows it is ignored, a blank file holds nothing, and a malformed one
(a scalar, an array of anything but objects) follows ``mode`` as a malformed line does.

Written by hand with the standard ``json`` module: pyarrow's inference keeps fields in order of
appearance, types timestamps and refuses conflicting types, where Spark's rules widen to string.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
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

from connector_base import ConnectorError
from connectors.files.formats.base import UTF8_BOM, line_bounds, malformed_error
from connectors.files.formats.json_lenient import NON_NUMERIC_BYTES, Leniency, parse_leniently
from connectors.files.formats.jsonl import DOCUMENT, document_text, document_utf8
from connectors.files.formats.line_framing import LineFraming
from connectors.files.inference_sample import InferenceSample
from connectors.files.options import FileSourceOptions, ParseMode

_DECODER = json.JSONDecoder()
_DECIMAL_DECODER = json.JSONDecoder(parse_float=Decimal)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_MAX_PRECISION = 38


class _NotARecord(ValueError):
    """A line that is JSON but not an object (nor an array of objects)."""


# Types are inferred as small tuples ("signatures") and turned into Spark types once at the end:
# building and comparing pyspark DataType objects per line costs ten times more.
_NULL, _BOOL, _LONG, _DOUBLE, _STRING = ("null",), ("boolean",), ("bigint",), ("double",), ("string",)
Sig = tuple[Any, ...]
_INFER_ADVICE = "give a schema, or set option mode to DROPMALFORMED or PERMISSIVE"
"""What a FAILFAST inference error suggests."""


def _number(value: int | float) -> Sig:
    if isinstance(value, float):
        return _DOUBLE
    if _LONG_MIN <= value <= _LONG_MAX:
        return _LONG
    digits = len(str(abs(value)))
    return ("decimal", digits, 0) if digits <= _MAX_PRECISION else _DOUBLE


@dataclass(frozen=True, slots=True)
class _How:
    """How lines are read for inference: the ``allow...`` options, ``prefersDecimal`` (a number with
    a fraction or exponent is a decimal of its digits when they fit 38) and ``primitivesAsString``."""

    lenient: Leniency
    decimals: bool = False
    strings: bool = False

    @staticmethod
    def of(options: FileSourceOptions) -> _How:
        return _How(options.json_leniency, options.prefers_decimal, options.primitives_as_string)

    @property
    def decoder(self) -> json.JSONDecoder:
        return _DECIMAL_DECODER if self.decimals else _DECODER


def _decimal(value: Decimal) -> Sig:
    """Spark's type of a number read as ``BigDecimal``: ``decimal(max(precision, scale), scale)``."""
    digits, exponent = value.as_tuple()[1:]
    if not isinstance(exponent, int):
        return _DOUBLE  # NaN or Infinity
    precision, scale = len(digits), -exponent
    if scale < 0:  # Spark fails the inference (NEGATIVE_SCALE_DISALLOWED)
        raise ConnectorError(
            f"prefersDecimal=true: the number {value} would be a decimal of negative scale {scale}, which "
            "Spark refuses (NEGATIVE_SCALE_DISALLOWED); give a schema, or read without prefersDecimal"
        )
    return _DOUBLE if precision > _MAX_PRECISION else ("decimal", max(precision, scale), scale)


def _infer(value: Any, strings: bool = False) -> Sig:
    if value is None or value == "":
        return _NULL
    if strings and not isinstance(value, dict | list):
        return _STRING
    if value is True or value is False:
        return _BOOL
    if isinstance(value, Decimal):
        return _decimal(value)
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return _STRING
    if isinstance(value, dict):
        return ("struct", tuple(sorted((k, _infer(v, strings)) for k, v in value.items())))
    element = _NULL
    for v in value:
        element = merge(element, _infer(v, strings))
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


def _spark_type(sig: Sig, drop_nulls: bool = False) -> DataType | None:
    """The Spark type of ``sig``: undecided fields become strings (``drop_nulls``,
    ``dropFieldIfAllNull``: they go, and arrays of them), empty structs go (Spark's
    ``canonicalizeType``)."""
    match sig[0]:
        case "null":
            return None if drop_nulls else StringType()
        case "string":
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
            element = _spark_type(sig[1], drop_nulls)
            return None if element is None else ArrayType(element, True)
        case _:
            fields = []
            for name, t in sig[1]:
                c = _spark_type(t, drop_nulls) if name else None
                if c is not None:
                    fields.append(StructField(name, c, True))
            return StructType(fields) if fields else None


def _first_value(text: str, how: _How) -> Any:
    """The first JSON value of ``text`` (``allowSingleQuotes``: single-quoted strings too)."""
    return parse_leniently(
        lambda t, _written: how.decoder.raw_decode(t, len(t) - len(t.lstrip(" \t\n\r")))[0], text, how.lenient
    )


def _record_type(line: bytes, how: _How) -> Sig:
    """A line's record type from its first JSON value; what follows the value is ignored, as Spark's
    parser stops after it (``{"a": 2} {"b": 3}`` is ``a`` alone)."""
    value = _first_value(line.decode("utf-8"), how)
    t = _infer(value, how.strings)
    if t[0] == "array":
        t = t[1]
    if t[0] in ("struct", "null"):
        return t
    raise _NotARecord(f"a JSON {type(value).__name__}, not an object")


def _bulk_types(lines: list[bytes], how: _How) -> list[Sig] | None:
    """The record types of ``lines`` parsed in one ``json.loads`` call (several times faster than
    one call per line), or ``None`` when a line is not one JSON record (or, with
    ``allowNonNumericNumbers=false``, may hold a ``NaN`` that ``json`` would take)."""
    if not how.lenient.non_numeric and any(NON_NUMERIC_BYTES.search(line) for line in lines):
        return None
    try:
        values = how.decoder.decode((b"[" + b",".join(lines) + b"]").decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if len(values) != len(lines):
        return None
    out = []
    for value in values:
        t = _infer(value, how.strings)
        if t[0] == "array":
            t = t[1]
        if t[0] not in ("struct", "null"):
            return None
        out.append(t)
    return out


def _lines(view: memoryview, framing: LineFraming) -> list[tuple[int, bytes | None, bytes]]:
    """The non-blank lines of ``view``: start, text as UTF-8 (``None``: not of the charset), bytes."""
    if not framing.custom:
        starts, ends = line_bounds(view)
        raw = ((s, bytes(view[s:e])) for s, e in zip(starts.tolist(), ends.tolist(), strict=True))
        return [(s, line, line) for s, line in raw if line.strip()]
    out = []
    for s, line in framing.lines(view):
        text = framing.to_utf8(line, strict=True)
        if text is None or text.strip():
            out.append((s, text, line))
    return out


def infer_jsonl(
    files: Iterable[tuple[str, Iterable[tuple[int, bytes]]]], options: FileSourceOptions
) -> StructType:
    """The schema of the files, each given as its path and its ``(offset, bytes)`` chunks of whole
    lines, by Spark's rules (see the module docstring)."""
    root: Sig = ("struct", ())
    seen: set[Sig] = set()
    corrupt = False
    framing = LineFraming.of(options)
    sample = InferenceSample(options.sampling_ratio)
    how = _How.of(options)
    for path, offset, data in ((p, o, d) for p, chunks in files for o, d in chunks):
        start = 3 if offset == 0 and data.startswith(UTF8_BOM) else 0
        view = memoryview(data)[start:]
        lines = _lines(view, framing)
        if not sample.every:
            lines = [line for line in lines if sample.keep()]
        types = (
            None
            if any(t is None for _s, t, _r in lines)
            else _bulk_types([t or b"" for _s, t, _r in lines], how)
        )
        if types is None:  # a malformed line somewhere: line by line, following mode
            types = []
            for s, text, line in lines:
                try:
                    if text is None:
                        raise ValueError(f"bytes that are not {framing.charset}")
                    types.append(_record_type(text, how))
                except (ValueError, RecursionError) as error:
                    if options.mode is ParseMode.FAILFAST:
                        at = offset + start + s
                        where = f"{path} at byte offset {at} while inferring the schema"
                        raise malformed_error("jsonl record", where, error, line, _INFER_ADVICE) from None
                    corrupt = True
        for t in types:
            if t not in seen:  # most records share a few shapes: merge each shape once
                seen.add(t)
                root = merge(root, t)
    return _schema(root, corrupt, options)


def _document_type(body: bytes, how: _How) -> Sig | None:
    """The record type of a ``multiLine`` document (``None``: a blank file); raises ``ValueError``
    when it is malformed (a scalar, an array of anything but objects). A ``null`` document adds
    nothing here, as in Spark's inference (reading it is then malformed)."""
    text = document_text(body)
    if text is None:
        return None
    value = _first_value(text, how)
    t = _infer(value, how.strings)
    if t[0] == "array":
        t = t[1]
    if t[0] not in ("struct", "null"):
        raise _NotARecord(f"a JSON {type(value).__name__}, not an object nor an array of objects")
    return t


def infer_json_documents(files: Iterable[tuple[str, bytes]], options: FileSourceOptions) -> StructType:
    """The schema of ``multiLine`` files, each given as its path and its (decompressed) bytes: one
    JSON document per file, what follows it ignored, by the rules of ``infer_jsonl``."""
    root: Sig = ("struct", ())
    corrupt = False
    framing = LineFraming.of(options)
    sample = InferenceSample(options.sampling_ratio)
    for path, raw in files:
        if not sample.keep():
            continue
        data = document_utf8(raw, framing)
        body = data[len(UTF8_BOM) :] if data.startswith(UTF8_BOM) else data
        try:
            if data == UTF8_BOM:  # Spark: malformed (unlike a mark followed by blanks, which is blank)
                raise _NotARecord("a byte-order mark and nothing else")
            t = _document_type(body, _How.of(options))
        except (ValueError, RecursionError) as error:
            if options.mode is ParseMode.FAILFAST:
                where = f"{path} while inferring the schema"
                raise malformed_error(DOCUMENT, where, error, data, _INFER_ADVICE, whole_file=True) from None
            corrupt = True
            continue
        if t is not None:
            root = merge(root, t)
    return _schema(root, corrupt, options)


def _schema(root: Sig, corrupt: bool, options: FileSourceOptions) -> StructType:
    schema = _spark_type(root, options.drop_field_if_all_null)
    fields = list(schema.fields) if isinstance(schema, StructType) else []
    name = options.corrupt_column
    if corrupt and options.mode is ParseMode.PERMISSIVE and name not in {f.name for f in fields}:
        fields = sorted([*fields, StructField(name, StringType(), True)], key=lambda f: f.name)
    return StructType(fields)
