"""The direct Avro decoder (``AvroDirectDecoder``, writer schema = reader schema) against arrow-avro
and fastavro.

The same datums through the three paths: the direct decoder (the default when the schemas are
equal), arrow-avro (``SPARKFLOW_AVRO_DECODER=arrow-avro``) and fastavro (``decode_group`` +
``to_arrow``, the reference): same Arrow type, same values, on every type. Then what the direct
decoder must refuse (so the group goes to fastavro, which isolates the record for the parse mode)
and what is outside its scope (so arrow-avro decodes the group).
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from connectors.formats.avro_decoder import AvroDecoder
from connectors.formats.native_module import compiled_class
from unit_tests.connectors.formats.avro_every_type import (
    EVERY_TYPE,
    NATIVE_TYPES,
    UNIONS,
    every_type_row,
    native_row,
    payloads,
    unions_row,
)

DIRECT = compiled_class("AvroDirectDecoder", "SPARKFLOW_AVRO_DECODER")
pytestmark = pytest.mark.skipif(
    DIRECT is None,
    reason="the compiled module (native/install_native.sh) without AvroDirectDecoder is installed",
)

SHAPES = [
    (EVERY_TYPE, [every_type_row(k) for k in range(9)]),
    (NATIVE_TYPES, [native_row(k) for k in range(9)]),
    (UNIONS, [unions_row(k) for k in range(12)]),
]


def _decode(
    schema: dict[str, Any], data: list[bytes], monkeypatch: pytest.MonkeyPatch, mode: str
) -> pa.Array:
    monkeypatch.setenv("SPARKFLOW_AVRO_DECODER", mode)
    decoder = AvroDecoder(json.dumps(schema))
    assert (decoder._direct is not None) == (mode == "native")
    out = decoder.decode_arrow(pa.array(data, pa.binary()), json.dumps(schema))
    assert out is not None, f"the {mode} decoder refused well-formed records"
    return out


@pytest.mark.parametrize("shape", range(len(SHAPES)), ids=["every-type", "native-types", "unions"])
def test_the_direct_decoder_equals_arrow_avro_and_fastavro(
    shape: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema, rows = SHAPES[shape]
    data = payloads(schema, rows)
    direct = _decode(schema, data, monkeypatch, "native")
    arrow_avro = _decode(schema, data, monkeypatch, "arrow-avro")
    reference = AvroDecoder(json.dumps(schema))
    python = reference.to_arrow(reference.decode_group(data, json.dumps(schema)))
    assert direct.type == arrow_avro.type == python.type == reference.arrow_type
    assert direct.to_pylist() == arrow_avro.to_pylist() == python.to_pylist()
    assert direct.null_count == python.null_count


def test_every_call_starts_empty_and_slices_decode_as_the_same_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARKFLOW_AVRO_DECODER", "native")
    rows = [unions_row(k) for k in range(12)]
    decoder = AvroDecoder(json.dumps(UNIONS))
    data = pa.array(payloads(UNIONS, rows), pa.binary())
    whole = decoder.decode_arrow(data, json.dumps(UNIONS))
    again = decoder.decode_arrow(data, json.dumps(UNIONS))
    part = decoder.decode_arrow(data.slice(3, 5), json.dumps(UNIONS))
    empty = decoder.decode_arrow(data.slice(0, 0), json.dumps(UNIONS))
    large = decoder.decode_arrow(data.cast(pa.large_binary()), json.dumps(UNIONS))
    assert whole is not None and again is not None and part is not None and empty is not None
    assert again.to_pylist() == whole.to_pylist() and len(whole) == 12
    assert part.to_pylist() == whole.to_pylist()[3:8]
    assert len(empty) == 0 and empty.type == whole.type
    assert large is not None and large.to_pylist() == whole.to_pylist()


SMALL = {
    "type": "record",
    "name": "Small",
    "namespace": "n.s",
    "fields": [
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
        {"name": "u", "type": ["null", "string", "E"]},
        {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 2}},
        {"name": "t", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "a", "type": {"type": "array", "items": "long"}},
        {"name": "m", "type": {"type": "map", "values": "n.s.E"}},
    ],
}


def _zigzag(n: int) -> bytes:
    raw = (n << 1) ^ (n >> 63)
    out = bytearray()
    while raw >= 0x80:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def _small(
    b: bytes = b"\x01",
    i: bytes = _zigzag(5),
    e: bytes = _zigzag(1),
    u: bytes = _zigzag(2) + _zigzag(0),
    d: bytes = _zigzag(2) + (1234).to_bytes(2, "big"),
    t: bytes = _zigzag(1_700_000_000_123),
    a: bytes = _zigzag(2) + _zigzag(7) + _zigzag(-8) + _zigzag(0),
    m: bytes = _zigzag(1) + _zigzag(1) + b"k" + _zigzag(1) + _zigzag(0),
) -> bytes:
    return b + i + e + u + d + t + a + m


def test_hand_written_datums_read_as_fastavro_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks with a negative count and a byte size (a writer's choice Avro allows), several blocks,
    a named type referenced by its full name and by its short name in its namespace, a negative
    decimal, an empty array and map."""
    blocks = _zigzag(-2) + _zigzag(2) + _zigzag(7) + _zigzag(-8) + _zigzag(1) + _zigzag(9) + _zigzag(0)
    data = [
        _small(),
        _small(a=blocks, u=_zigzag(0)),
        _small(d=_zigzag(2) + (-1234).to_bytes(2, "big", signed=True), a=_zigzag(0), m=_zigzag(0)),
        _small(u=_zigzag(1) + _zigzag(3) + "é!".encode()),
    ]
    direct = _decode(SMALL, data, monkeypatch, "native")
    arrow_avro = _decode(SMALL, data, monkeypatch, "arrow-avro")
    reference = AvroDecoder(json.dumps(SMALL))
    python = reference.to_arrow(reference.decode_group(data, json.dumps(SMALL)))
    assert direct.type == arrow_avro.type == python.type
    assert direct.to_pylist() == arrow_avro.to_pylist()
    # fastavro gives an enum in a union with a string as a bare str (no branch name), so the
    # fallback puts it in the string's member; the compiled decoders read the branch index
    without_u = [{k: v for k, v in r.items() if k != "u"} for r in direct.to_pylist()]
    assert without_u == [{k: v for k, v in r.items() if k != "u"} for r in python.to_pylist()]
    rows = direct.to_pylist()
    assert rows[1]["a"] == [7, -8, 9] and rows[1]["u"] is None
    assert str(rows[2]["d"]) == "-12.34" and rows[2]["a"] == [] and rows[2]["m"] == []
    assert rows[0]["u"] == {"member0": None, "member1": "A"} and rows[0]["m"] == [("k", "B")]
    assert rows[3]["u"] == {"member0": "é!", "member1": None}


BAD = {
    "truncated": _small()[:-3],
    "trailing bytes": _small() + b"\x00",
    "boolean 2": _small(b=b"\x02"),
    "int beyond 32 bits": _small(i=_zigzag(2**31)),
    "enum index beyond the symbols": _small(e=_zigzag(2)),
    "negative enum index": _small(e=_zigzag(-1)),
    "union branch beyond the union": _small(u=_zigzag(3)),
    "invalid UTF-8": _small(u=_zigzag(1) + _zigzag(2) + b"\xc3\x28"),
    "negative length": _small(u=_zigzag(1) + _zigzag(-1)),
    "decimal beyond its precision": _small(d=_zigzag(2) + (10000).to_bytes(2, "big")),
    "decimal wider than 128 bits": _small(d=_zigzag(17) + b"\x01" * 17),
    "millisecond timestamp beyond microseconds": _small(t=_zigzag(2**62)),
    "number longer than 10 bytes": _small(i=b"\xff" * 11),
    "invalid UTF-8 map key": _small(m=_zigzag(1) + _zigzag(1) + b"\xff" + _zigzag(0) + _zigzag(0)),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_datum_the_direct_decoder_cannot_read_fails_the_call_with_its_row(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sparkflow_kafka_native import AvroBatchError

    direct = DIRECT(json.dumps(SMALL))
    data = [_small(), _small(), BAD[case], _small()]
    with pytest.raises(AvroBatchError) as refused:
        direct.decode(pa.RecordBatch.from_arrays([pa.array(data, pa.binary())], names=["datum"]))
    row = refused.value.args[0]
    assert row in (2, -1)  # -1: found when the columns are finished (UTF-8 is checked per column)
    assert row == 2 or "utf-8" in refused.value.args[1].lower()
    # the caller then takes the reference path, which isolates the record
    monkeypatch.setenv("SPARKFLOW_AVRO_DECODER", "native")
    decoder = AvroDecoder(json.dumps(SMALL))
    assert decoder.decode_arrow(pa.array(data, pa.binary()), json.dumps(SMALL)) is None
    one_by_one = decoder.decode_group(data, json.dumps(SMALL))
    assert [isinstance(v, Exception) for v in one_by_one][:2] == [False, False]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "record", "name": "Wide", "fields": [
            {"name": "d", "type": {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 2}},
        ]},
        {"type": "array", "items": "long"},
        {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]},
        {"type": "record", "name": "Missing", "fields": [{"name": "x", "type": "NotDefined"}]},
    ],
    ids=["decimal-over-38-digits", "not-a-record", "recursive", "undefined-name"],
)  # fmt: skip
def test_a_schema_outside_the_direct_decoders_scope_is_refused_at_construction(
    schema: dict[str, Any],
) -> None:
    with pytest.raises(ValueError):
        DIRECT(json.dumps(schema))


@pytest.mark.parametrize("mode", ["PERMISSIVE", "DROPMALFORMED"])
def test_a_group_with_a_malformed_record_gives_its_good_records_the_native_members(mode: str) -> None:
    """The group goes to fastavro to find the malformed record; its good records are then decoded
    natively again, so an enum in a union with a string lands in the enum's member, as in every
    other group (fastavro alone would put it in the string's)."""
    import numpy as np

    from connectors.formats.format_options import RecordFormatOptions
    from connectors.formats.reader_schemas import ReaderSchema
    from connectors.formats.record_decoder import RecordDecoder

    text = json.dumps(SMALL)
    opts = RecordFormatOptions.parse({"valueFormat": "avro", "valueSchema": text, "mode": mode})
    decoder = RecordDecoder(opts, {"value": ReaderSchema("value", text)})
    values = [_small(), _small()[:-3], _small(u=_zigzag(1) + _zigzag(1) + b"x")]
    batch = pa.RecordBatch.from_arrays(
        [pa.array([None] * 3, pa.binary()), pa.array(values, pa.binary()), pa.array(np.arange(3))],
        names=["key", "value", "offset"],
    )
    out, kept = decoder.decode(batch, lambda i: f"offset {i}")
    unions = out.column("u").to_pylist()
    if mode == "DROPMALFORMED":
        assert kept is not None and kept.tolist() == [True, False, True]
        assert unions == [{"member0": None, "member1": "A"}, {"member0": "x", "member1": None}]
    else:
        assert unions == [{"member0": None, "member1": "A"}, None, {"member0": "x", "member1": None}]
        reasons = out.column("_corrupt_record").to_pylist()
        assert [r is not None for r in reasons] == [False, True, False]


def test_null_fields_and_unions_of_null_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``null`` field takes no bytes; a union of ``null`` alone still writes its branch index."""
    schema = {
        "type": "record",
        "name": "Nulls",
        "fields": [
            {"name": "n", "type": "null"},
            {"name": "only_null", "type": ["null"]},
            {"name": "i", "type": "int"},
        ],
    }
    data = payloads(schema, [{"n": None, "only_null": None, "i": k} for k in range(3)])
    direct = _decode(schema, data, monkeypatch, "native")
    reference = AvroDecoder(json.dumps(schema))
    python = reference.to_arrow(reference.decode_group(data, json.dumps(schema)))
    assert direct.type == python.type
    assert (
        direct.to_pylist() == python.to_pylist() == [{"n": None, "only_null": None, "i": k} for k in range(3)]
    )
