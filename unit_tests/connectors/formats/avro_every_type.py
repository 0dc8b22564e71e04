"""One Avro record schema with every type, and rows of it: the cases both Avro decoders and the
``from_avro`` oracle are checked on (unit_tests/connectors/formats/test_avro_native.py,
integration_tests/connectors/formats/test_avro_from_avro_oracle.py).

``EVERY_TYPE`` has every Avro type, unions of several non-null branches and promotions included;
``NATIVE_TYPES`` leaves those unions out (the native decoder handed them to fastavro until it
learnt Spark's ``member<i>`` structs; kept as a second shape); ``UNIONS`` has unions at every
depth: in arrays and maps, inside nullable records, of two records, with an enum, with bytes.
"""

from __future__ import annotations

import datetime
import decimal
import io
import uuid
from typing import Any

__all__ = [
    "EVERY_TYPE",
    "MULTI_BRANCH",
    "NATIVE_TYPES",
    "UNIONS",
    "every_type_row",
    "native_row",
    "payloads",
    "unions_row",
]

EVERY_TYPE: dict[str, Any] = {
    "type": "record",
    "name": "Every",
    "namespace": "t",
    "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "s", "type": "string"},
        {"name": "by", "type": "bytes"},
        {"name": "n", "type": "null"},
        {"name": "opt", "type": ["null", "string"]},
        {"name": "opt_last", "type": ["long", "null"]},
        {"name": "int_long", "type": ["int", "long"]},
        {"name": "float_double", "type": ["null", "float", "double"]},
        {
            "name": "multi",
            "type": [
                "null",
                "int",
                "string",
                {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": "int"}]},
            ],
        },
        {"name": "e", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
        {"name": "fx", "type": {"type": "fixed", "name": "Four", "size": 4}},
        {"name": "dec_b", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 3}},
        {
            "name": "dec_f",
            "type": {
                "type": "fixed",
                "name": "DecF",
                "size": 8,
                "logicalType": "decimal",
                "precision": 18,
                "scale": 2,
            },
        },
        {"name": "date", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tmillis", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "tmicros", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "tsmillis", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "tsmicros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "ltsmillis", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "ltsmicros", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "u", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "arr", "type": {"type": "array", "items": ["null", "long"]}},
        {"name": "m", "type": {"type": "map", "values": "t.Inner"}},
        {
            "name": "nested",
            "type": {
                "type": "record",
                "name": "Outer",
                "fields": [
                    {"name": "inner", "type": ["null", "t.Inner"]},
                    {"name": "tags", "type": {"type": "array", "items": "string"}},
                ],
            },
        },
    ],
}


def every_type_row(k: int) -> dict[str, Any]:
    """A row of ``EVERY_TYPE`` (nulls, empty collections and negative numbers included)."""
    base = datetime.datetime(2024, 2, 29, 12, 30, 15, 123000, tzinfo=datetime.UTC) + datetime.timedelta(
        days=k
    )
    return {
        "b": k % 2 == 0,
        "i": -k,
        "l": 2**40 + k,
        "f": 1.5 + k,
        "d": 2.25 * k,
        "s": f"str{k}é",
        "by": bytes([k, 255]),
        "n": None,
        "opt": None if k % 2 else f"o{k}",
        "opt_last": k if k % 2 else None,
        "int_long": k * 1000,
        "float_double": None if k == 0 else 0.5 * k,
        "multi": [None, k, f"m{k}", {"x": k}][k % 4],
        "e": ["RED", "GREEN"][k % 2],
        "fx": b"ab" + bytes([k, k]),
        "dec_b": decimal.Decimal(f"-{k}.125"),
        "dec_f": decimal.Decimal(f"{k}12345.67"),
        "date": base.date(),
        "tmillis": datetime.time(1, 2, 3, 4000),
        "tmicros": datetime.time(23, 59, 59, 999999),
        "tsmillis": base,
        "tsmicros": base + datetime.timedelta(microseconds=7),
        "ltsmillis": base.replace(tzinfo=None),
        "ltsmicros": base.replace(tzinfo=None) + datetime.timedelta(microseconds=9),
        "u": str(uuid.UUID(int=k)),
        "arr": [k, None, -k],
        "m": {"a": {"x": k}, "b": {"x": -k}} if k % 2 else {},
        "nested": {"inner": None if k % 2 else {"x": k}, "tags": ["t"] * k},
    }


MULTI_BRANCH = ("int_long", "float_double", "multi")
"""The unions of several non-null branches (and their promotions)."""

# Inner is defined inside "multi" in EVERY_TYPE
INNER = {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": "int"}]}
NATIVE_TYPES = {
    **EVERY_TYPE,
    "fields": [
        {"name": "m", "type": {"type": "map", "values": INNER}} if f["name"] == "m" else f
        for f in EVERY_TYPE["fields"]
        if f["name"] not in MULTI_BRANCH
    ],
}
"""Every type but unions of several non-null branches."""


def native_row(k: int) -> dict[str, Any]:
    """A row of ``NATIVE_TYPES``."""
    return {n: v for n, v in every_type_row(k).items() if n not in MULTI_BRANCH}


UNIONS: dict[str, Any] = {
    "type": "record",
    "name": "Unions",
    "namespace": "u",
    "fields": [
        {"name": "in_array", "type": {"type": "array", "items": ["null", "int", "string"]}},
        {"name": "in_map", "type": {"type": "map", "values": ["string", "double"]}},
        {
            "name": "two_records",
            "type": [
                {"type": "record", "name": "A", "fields": [{"name": "a", "type": "int"}]},
                {"type": "record", "name": "B", "fields": [{"name": "b", "type": "string"}]},
            ],
        },
        {"name": "with_enum", "type": ["null", {"type": "enum", "name": "E", "symbols": ["X", "Y"]}, "long"]},
        {
            "name": "nested",
            "type": {
                "type": "record",
                "name": "N",
                "fields": [{"name": "u", "type": ["boolean", "bytes", "null"]}],
            },
        },
        {
            "name": "nullable_nested",
            "type": [
                "null",
                {"type": "record", "name": "M", "fields": [{"name": "u", "type": ["int", "string"]}]},
            ],
        },
        {"name": "array_or_string", "type": ["null", {"type": "array", "items": "string"}, "string"]},
        {"name": "long_int", "type": ["long", "int", "null"]},
    ],
}


def unions_row(k: int) -> dict[str, Any]:
    """A row of ``UNIONS`` (each union takes each of its branches over a few rows)."""
    return {
        "in_array": [] if k % 3 == 0 else [k, None, f"s{k}"],
        "in_map": {} if k % 4 == 0 else {"x": f"v{k}", "y": 1.5 * k},
        "two_records": {"a": k} if k % 2 else {"b": f"b{k}"},
        "with_enum": [None, "Y", k][k % 3],
        "nested": {"u": [True, bytes([k, 0]), None][k % 3]},
        "nullable_nested": None if k % 4 == 0 else {"u": k if k % 2 else str(k)},
        "array_or_string": [None, ["a", str(k)], f"s{k}"][k % 3],
        "long_int": [2**40 + k, k, None][k % 3],
    }


def payloads(schema: dict[str, Any], rows: list[dict[str, Any]]) -> list[bytes]:
    """Header-less Avro datums written by fastavro."""
    import fastavro

    parsed = fastavro.parse_schema(schema)
    out = []
    for r in rows:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, r)
        out.append(buf.getvalue())
    return out
