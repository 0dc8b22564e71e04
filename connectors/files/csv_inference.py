"""The ``csv`` schema with ``inferSchema=true``, inferred by the rules of Spark 4's ``CSVInferSchema``.

Every field of every sampled line counts (a blank line, and with ``header`` any line equal to the
header line, does not). A field that is empty or ``nullValue`` leaves its column's type as it is;
otherwise the column's type so far decides where the field's trial starts, and each failing trial
goes on to the next: ``int`` (Java's ``Integer.parseInt``), ``bigint``, ``decimal(p,0)`` (an
integer beyond a long, up to 38 digits; a number with a fraction or exponent never), ``double``
(Java's ``Double.parseDouble``, or ``NaN`` / ``Inf`` / ``-Inf``), ``date`` (``yyyy-MM-dd``),
``timestamp`` (Spark's timestamp text with a date: ``2024-1-1``, ``2024-01-01 10:00``, with an
offset or a zone), ``boolean`` (``true`` / ``false``, any case), ``string``. The field's type then
merges with the column's: ``int`` < ``bigint`` < ``double``, an integer and a decimal widen to a
decimal, a decimal and a double give ``double``, a date and a timestamp give ``timestamp`` (as
Spark 4 with its default formats), and anything else that does not merge gives ``string``. A
column that only held empty fields is ``string``. Not followed: a time without a date (``10:00``),
which Spark takes as a timestamp of the current day; files-unified infers ``string``.

As Spark, each file is inferred on its own (one partition per small file) and the files' types
then merge by the same rules, except that two types that do not merge leave the column undecided
(Spark's ``mergeRowTypes``), so a later file decides it. Malformed lines are not special: their
fields count as far as the columns go (``mode`` plays no part, as in Spark).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation

from pyspark.sql.types import (
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    TimestampType,
)

from connectors.files.modified_time_filter import parse_timestamp

Sig = tuple[str, ...] | tuple[str, int, int]
"""A column's type so far: ``("null",)``, ``("int",)``, ``("long",)``, ``("decimal", p, s)``,
``("double",)``, ``("date",)``, ``("timestamp",)``, ``("boolean",)`` or ``("string",)``."""

NULL: Sig = ("null",)
STRING: Sig = ("string",)
_INT_RANGE = 2**31
_LONG_RANGE = 2**63
_MAX_PRECISION = 38
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DOUBLE = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?)"
)
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
"""Spark's default ``dateFormat`` (``yyyy-MM-dd``), strict: ``2024-1-1`` is a timestamp, not a date."""
_NUMERIC_ORDER = ("int", "long", "double")
_INF_OR_NAN = ("NaN", "Inf", "-Inf")
"""Spark's csv ``nanValue``, ``positiveInf``, ``negativeInf`` defaults (options files-unified has not)."""


def _java_trim(text: str) -> str:
    """Java's ``String.trim``: characters up to U+0020 off both ends (``Double.parseDouble`` trims)."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _try_int(field: str) -> Sig:
    if _INTEGER.fullmatch(field) and -_INT_RANGE <= int(field) < _INT_RANGE:
        return ("int",)
    return _try_long(field)


def _try_long(field: str) -> Sig:
    if _INTEGER.fullmatch(field) and -_LONG_RANGE <= int(field) < _LONG_RANGE:
        return ("long",)
    return _try_decimal(field)


def _try_decimal(field: str) -> Sig:
    """Java's ``BigDecimal``: only a scale of 0 gives a decimal (a negative one is refused by Spark's
    ``DecimalType``, a positive one is a fraction), up to 38 digits."""
    if _DECIMAL.fullmatch(field):
        try:
            exponent = Decimal(field).as_tuple().exponent
        except InvalidOperation:
            return _try_double(field)
        if exponent == 0:
            digits = Decimal(field).as_tuple().digits
            precision = len(digits) - next((i for i, d in enumerate(digits) if d), len(digits) - 1)
            if precision <= _MAX_PRECISION:
                return ("decimal", precision, 0)
    return _try_double(field)


def _try_double(field: str) -> Sig:
    if _DOUBLE.fullmatch(_java_trim(field)) or field in _INF_OR_NAN:
        return ("double",)
    return _try_date(field)


def _try_date(field: str) -> Sig:
    if _DATE.fullmatch(field):
        try:
            parse_timestamp(field, "UTC")
            return ("date",)
        except ValueError:
            pass
    return _try_timestamp(field)


def _try_timestamp(field: str) -> Sig:
    try:
        parse_timestamp(field, "UTC")
        return ("timestamp",)
    except ValueError:
        return _try_boolean(field)


def _try_boolean(field: str) -> Sig:
    return ("boolean",) if field.lower() in ("true", "false") else STRING


def _decimal_of(t: Sig) -> Sig:
    """``DecimalType.forType``: the decimal that holds every value of an integer type."""
    return ("decimal", 10, 0) if t[0] == "int" else ("decimal", 20, 0)


def compatible(a: Sig, b: Sig) -> Sig | None:
    """Spark's ``compatibleType`` for CSV (tightest common type, then the CSV rules); ``None`` when
    the two do not merge."""
    if {a[0], b[0]} == {"date", "timestamp"}:  # as Spark 4 does with the default formats
        return ("timestamp",)
    if a == b:
        return a
    if a == NULL:
        return b
    if b == NULL:
        return a
    if a[0] in _NUMERIC_ORDER and b[0] in _NUMERIC_ORDER:
        return max(a, b, key=lambda t: _NUMERIC_ORDER.index(t[0]))
    if a == STRING or b == STRING:
        return STRING
    if a[0] in ("int", "long") and b[0] == "decimal":
        return compatible(_decimal_of(a), b)
    if a[0] == "decimal" and b[0] in ("int", "long"):
        return compatible(a, _decimal_of(b))
    if {a[0], b[0]} == {"double", "decimal"}:
        return ("double",)
    if a[0] == "decimal" and b[0] == "decimal":
        scale = max(int(a[2]), int(b[2]))
        whole = max(int(a[1]) - int(a[2]), int(b[1]) - int(b[2]))
        return ("double",) if whole + scale > _MAX_PRECISION else ("decimal", whole + scale, scale)
    return None


class CsvInference:
    """Column types of csv lines (as tokens), file by file, as Spark's ``CSVInferSchema`` infers them."""

    def __init__(self, width: int, null_value: str) -> None:
        self.types: list[Sig] = [NULL] * width
        self._null_value = null_value

    def infer_file(self, rows: Iterable[Sequence[str | None]]) -> None:
        """Infer one file's rows (one Spark partition), then merge its types into the result."""
        file_types: list[Sig] = [NULL] * len(self.types)
        for row in rows:
            for i in range(min(len(file_types), len(row))):
                file_types[i] = self._field(file_types[i], row[i])
        self.types = [compatible(a, b) or NULL for a, b in zip(self.types, file_types, strict=True)]

    def _field(self, so_far: Sig, field: str | None) -> Sig:
        if field is None or field == "" or field == self._null_value:
            return so_far
        match so_far[0]:
            case "null" | "int":
                found = _try_int(field)
            case "long":
                found = _try_long(field)
            case "decimal":
                found = _try_decimal(field)
            case "double":
                found = _try_double(field)
            case "date":
                found = _try_date(field)
            case "timestamp":
                found = _try_timestamp(field)
            case "boolean":
                found = _try_boolean(field)
            case _:
                found = STRING
        return compatible(so_far, found) or STRING

    def spark_types(self) -> list[DataType]:
        """The inferred Spark types (a column never decided is a string)."""
        return [spark_type(t) for t in self.types]


def spark_type(t: Sig) -> DataType:
    """The Spark type of a signature."""
    match t[0]:
        case "int":
            return IntegerType()
        case "long":
            return LongType()
        case "decimal":
            return DecimalType(int(t[1]), int(t[2]))
        case "double":
            return DoubleType()
        case "date":
            return DateType()
        case "timestamp":
            return TimestampType()
        case "boolean":
            return BooleanType()
        case _:
            return StringType()
