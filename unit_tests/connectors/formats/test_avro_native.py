"""The native Avro batch decoder (arrow-avro in the compiled module) against the fastavro path.

Same payloads through ``AvroDecoder.decode_arrow`` (native) and ``decode_group`` + ``to_arrow``
(fastavro): same Arrow type, same values, for every type the native path takes, for writer ->
reader resolution, and with a malformed record in the batch (the native decoder refuses the
group, the parse mode still isolates the one record). Spark's own ``from_avro`` is the oracle of
both in integration_tests/connectors/formats/test_avro_from_avro_oracle.py.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from connectors.formats.avro_decoder import AvroDecoder, native_avro_decoder
from connectors.formats.format_options import RecordFormatOptions
from connectors.formats.reader_schemas import ReaderSchema
from connectors.formats.record_decoder import RecordDecoder
from unit_tests.connectors.formats.avro_every_type import (
    EVERY_TYPE,
    NATIVE_TYPES,
    UNIONS,
    every_type_row,
    native_row,
    payloads,
    unions_row,
)

pytestmark = pytest.mark.skipif(
    native_avro_decoder() is None,
    reason="the compiled module (native/install_native.sh) without AvroBatchDecoder is installed",
)


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


def test_unions_of_several_branches_are_decoded_natively_as_spark_members() -> None:
    """arrow-avro's dense unions become Spark's ``member<i>`` structs (or the promoted number) at any
    depth: in arrays and maps, in nullable records, of two records, with an enum, with bytes."""
    for schema, rows in (
        (EVERY_TYPE, [every_type_row(k) for k in range(9)]),
        (UNIONS, [unions_row(k) for k in range(12)]),
    ):
        native, python = _both(schema, schema, payloads(schema, rows))
        assert native.type == python.type
        assert native.to_pylist() == python.to_pylist()
    rows = native.to_pylist()
    assert rows[0]["two_records"] == {"member0": None, "member1": {"b": "b0"}}  # the second record, by name
    assert rows[1]["two_records"] == {"member0": {"a": 1}, "member1": None}
    assert rows[2]["in_array"] == [
        {"member0": 2, "member1": None}, None, {"member0": None, "member1": "s2"},
    ]  # fmt: skip
    assert rows[4]["with_enum"] == {"member0": "Y", "member1": None}
    assert rows[0]["nullable_nested"] is None and rows[3]["nullable_nested"] == {
        "u": {"member0": 3, "member1": None}
    }
    assert [r["long_int"] for r in rows[:3]] == [2**40, 1, None]


def test_a_slice_of_payloads_decodes_as_the_same_rows() -> None:
    rows = [unions_row(k) for k in range(12)]
    decoder = AvroDecoder(json.dumps(UNIONS))
    data = pa.array(payloads(UNIONS, rows), pa.binary())
    whole = decoder.decode_arrow(data, json.dumps(UNIONS))
    part = decoder.decode_arrow(data.slice(3, 5), json.dumps(UNIONS))
    assert whole is not None and part is not None
    assert part.to_pylist() == whole.to_pylist()[3:8]


def test_a_reader_union_with_other_branches_resolves_as_fastavro_does() -> None:
    """The writer's branches in another order, one more branch in the reader, an int branch
    promoted to the reader's long: each value lands in the reader's member of its branch."""
    writer = {
        "type": "record",
        "name": "R",
        "fields": [{"name": "u", "type": ["string", "int", "null"]}, {"name": "k", "type": "int"}],
    }
    reader = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "u", "type": ["null", "long", "boolean", "string"]},
            {"name": "k", "type": "long"},
        ],
    }
    rows = [{"u": [f"s{k}", k, None][k % 3], "k": k} for k in range(7)]
    native, python = _both(reader, writer, payloads(writer, rows))
    assert native.type == python.type
    assert native.to_pylist() == python.to_pylist()
    assert native.to_pylist()[:3] == [
        {"u": {"member0": None, "member1": None, "member2": "s0"}, "k": 0},
        {"u": {"member0": 1, "member1": None, "member2": None}, "k": 1},
        {"u": None, "k": 2},
    ]


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
