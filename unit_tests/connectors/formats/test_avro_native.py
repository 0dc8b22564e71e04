"""The native Avro batch decoder (arrow-avro in the compiled module) against the fastavro path.

Same payloads through ``AvroDecoder.decode_arrow`` (native) and ``decode_group`` + ``to_arrow``
(fastavro): same Arrow type, same values, for every type the native path takes, for writer ->
reader resolution, and with a malformed record in the batch (the native decoder refuses the
group, the parse mode still isolates the one record). Spark's own ``from_avro`` is the oracle of
both in integration_tests/connectors/formats/test_avro_from_avro_oracle.py.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
import uuid
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from connectors.formats.avro_decoder import AvroDecoder, native_avro_decoder
from connectors.formats.format_options import RecordFormatOptions
from connectors.formats.reader_schemas import ReaderSchema
from connectors.formats.record_decoder import RecordDecoder

pytestmark = pytest.mark.skipif(
    native_avro_decoder() is None,
    reason="the compiled module (native/install_native.sh) without AvroBatchDecoder is installed",
)

INNER = {"type": "record", "name": "Inner", "fields": [{"name": "x", "type": "int"}]}
NATIVE_TYPES = {
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
        {"name": "m", "type": {"type": "map", "values": INNER}},
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


def native_row(k: int) -> dict[str, Any]:
    """A row of ``NATIVE_TYPES`` (nulls, empty collections and negative numbers included)."""
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


def _both(reader: dict[str, Any], writer: dict[str, Any], data: list[bytes]) -> tuple[pa.Array, pa.Array]:
    decoder = AvroDecoder(json.dumps(reader))
    assert decoder.native
    native = decoder.decode_arrow(pa.array(data, pa.binary()), json.dumps(writer))
    assert native is not None, "the native decoder refused well-formed records"
    python = decoder.to_arrow(decoder.decode_group(data, json.dumps(writer)))
    return native, python


def test_every_native_type_equals_the_fastavro_path() -> None:
    rows = [native_row(k) for k in range(9)]
    native, python = _both(NATIVE_TYPES, NATIVE_TYPES, payloads(NATIVE_TYPES, rows))
    assert native.type == python.type
    assert native.to_pylist() == python.to_pylist()


def test_writer_schemas_resolve_to_the_reader_schema_as_fastavro_does() -> None:
    writer = {
        "type": "record",
        "name": "Order",
        "fields": [
            {"name": "id", "type": "int"},  # promoted to long
            {"name": "gone", "type": "string"},  # the reader lacks it
            {"name": "amount", "type": "float"},  # promoted to double
            {"name": "state", "type": {"type": "enum", "name": "S", "symbols": ["A", "B", "NEW"]}},
            {"name": "old_name", "type": "string"},
        ],
    }
    reader = {
        "type": "record",
        "name": "Order",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "amount", "type": "double"},
            {
                "name": "state",
                "type": {"type": "enum", "name": "S", "symbols": ["A", "B", "OTHER"], "default": "OTHER"},
            },
            {"name": "new_name", "type": "string", "aliases": ["old_name"]},
            {"name": "added", "type": ["null", "string"], "default": None},
            {"name": "count", "type": "long", "default": 7},
        ],
    }
    rows = [
        {"id": i, "gone": "x" * i, "amount": 0.5 * i, "state": ["A", "B", "NEW"][i % 3], "old_name": f"n{i}"}
        for i in range(7)
    ]
    native, python = _both(reader, writer, payloads(writer, rows))
    assert native.type == python.type
    assert native.to_pylist() == python.to_pylist()
    assert native.to_pylist()[2] == {
        "id": 2, "amount": 1.0, "state": "OTHER", "new_name": "n2", "added": None, "count": 7,
    }  # fmt: skip


@pytest.mark.parametrize("mode", ["PERMISSIVE", "DROPMALFORMED", "FAILFAST"])
def test_a_malformed_record_is_isolated_with_the_native_decoder_on(mode: str) -> None:
    good = payloads(NATIVE_TYPES, [native_row(k) for k in range(5)])
    values: list[bytes | None] = [*good[:2], good[2][:7], None, *good[3:], good[4] + b"\x00"]
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([None] * len(values), pa.binary()),
            pa.array(values, pa.binary()),
            pa.array(np.arange(len(values))),
        ],
        names=["key", "value", "offset"],
    )
    text = json.dumps(NATIVE_TYPES)
    opts = RecordFormatOptions.parse({"valueFormat": "avro", "valueSchema": text, "mode": mode})
    decoder = RecordDecoder(opts, {"value": ReaderSchema("value", text)})
    if mode == "FAILFAST":
        with pytest.raises(Exception, match=r"offset 2: malformed Avro value"):
            decoder.decode(batch, lambda i: f"offset {i}")
        return
    out, kept = decoder.decode(batch, lambda i: f"offset {i}")
    if mode == "DROPMALFORMED":
        assert kept is not None and kept.tolist() == [True, True, False, True, True, True, True]
        assert out.column("s").to_pylist() == ["str0é", "str1é", None, "str3é", "str4é", "str4é"]
    else:
        assert out.column("s").to_pylist() == ["str0é", "str1é", None, None, "str3é", "str4é", "str4é"]
        reasons = out.column("_corrupt_record").to_pylist()
        assert [r is not None for r in reasons] == [False, False, True, False, False, False, False]
