"""Every Avro type decodes to what Spark's own ``from_avro`` gives: same Spark type, same values.

The oracle is spark-avro from Maven Central run in a child Spark (``from_avro_oracle``); our side is
``AvroDecoder`` with the same payloads (written by fastavro). Both are compared as Arrow values and
as Spark type strings.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
import uuid
from typing import Any

import pyarrow as pa
import pytest

from connectors.formats.avro_decoder import AvroDecoder, native_avro_decoder
from integration_tests.connectors.formats.from_avro_oracle import run_oracle

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(600)]

EVERY_TYPE = {
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
        },  # fmt: skip
    ],
}


def _row(k: int) -> dict[str, Any]:
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


def _payloads(schema: dict[str, Any], rows: list[dict[str, Any]]) -> list[bytes]:
    import fastavro

    parsed = fastavro.parse_schema(schema)
    out = []
    for r in rows:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, r)
        out.append(buf.getvalue())
    return out


def _oracle(cases: list[dict[str, Any]]) -> list[tuple[str, pa.Table]]:
    return run_oracle("integration_tests.connectors.formats.from_avro_oracle", cases)


def _spark_type(arrow: pa.DataType) -> str:
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(arrow, prefer_timestamp_ntz=True).simpleString()


MULTI_BRANCH = ("int_long", "float_double", "multi")
# Inner was defined inside "multi"
INNER = {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": "int"}]}
NATIVE_TYPES = {
    **EVERY_TYPE,
    "fields": [
        {"name": "m", "type": {"type": "map", "values": INNER}} if f["name"] == "m" else f
        for f in EVERY_TYPE["fields"]
        if f["name"] not in MULTI_BRANCH
    ],
}
"""What the native decoder takes: every type but unions of several non-null branches."""


def test_every_avro_type_matches_spark_from_avro() -> None:
    rows = [_row(k) for k in range(8)]
    payloads = _payloads(EVERY_TYPE, rows)
    native_rows = [{k: v for k, v in r.items() if k not in MULTI_BRANCH} for r in rows]
    native_payloads = _payloads(NATIVE_TYPES, native_rows)
    (spark_type, spark_table), (native_spark_type, native_spark_table) = _oracle(
        [
            {"schema": EVERY_TYPE, "payloads": [p.hex() for p in payloads]},
            {"schema": NATIVE_TYPES, "payloads": [p.hex() for p in native_payloads]},
        ]
    )

    decoder = AvroDecoder(json.dumps(EVERY_TYPE))  # the fastavro path (multi-branch unions)
    ours = decoder.to_arrow(decoder.decode_group(payloads, json.dumps(EVERY_TYPE)))
    _assert_same(ours, spark_type, spark_table, EVERY_TYPE)

    decoder = AvroDecoder(json.dumps(NATIVE_TYPES))  # the fastavro path, then the native one
    ours = decoder.to_arrow(decoder.decode_group(native_payloads, json.dumps(NATIVE_TYPES)))
    _assert_same(ours, native_spark_type, native_spark_table, NATIVE_TYPES)
    native = decoder.decode_arrow(pa.array(native_payloads, pa.binary()), json.dumps(NATIVE_TYPES))
    if native_avro_decoder() is not None:  # the compiled module is built by make test
        assert decoder.native and native is not None
        _assert_same(native, native_spark_type, native_spark_table, NATIVE_TYPES)


def _assert_same(ours: pa.Array, spark_type: str, spark_table: pa.Table, schema: dict[str, Any]) -> None:
    assert _spark_type(ours.type) == spark_type
    ours_rows, spark_rows = ours.to_pylist(), spark_table.column("v").combine_chunks().to_pylist()
    for name in [f["name"] for f in schema["fields"]]:
        assert [r[name] for r in ours_rows] == [r[name] for r in spark_rows], name
