"""The native Protobuf decoder against the Python one (the reference), on the same bytes.

Every field kind goes through both paths (``ProtobufDecoder.decode_arrow``: the compiled
``ProtobufBatchDecoder``; ``decode_group`` + ``to_arrow``: the ``protobuf`` runtime), and the two
Arrow arrays must be equal: type and values, map entries in the same (wire) order, as Spark's
``from_protobuf`` gives them.
Where the native decoder cannot be sure of the runtime's answer it must refuse (``None``), so the
caller decodes with the runtime. Skipped where the compiled module is not installed.
"""

from __future__ import annotations

import math
import random
import struct
from typing import Any

import pyarrow as pa
import pytest
from google.protobuf import message_factory

from connectors.formats.protobuf_decoder import ProtobufDecoder
from connectors.formats.protobuf_native import native_protobuf_decoder
from connectors.formats.protobuf_schema import ProtoSchema
from connectors.formats.protobuf_types import ProtobufRecursionError
from unit_tests.connectors.formats.test_protobuf import ALL_TYPES

pytestmark = pytest.mark.skipif(
    native_protobuf_decoder() is None,
    reason="the compiled module (native/kafka_reader) is not installed, or SPARKFLOW_PROTOBUF_DECODER=python",
)

PROTO2 = """
syntax = "proto2";
package p2;
enum Color { RED = 1; GREEN = 2; BLUE = 5; }
message M {
  optional int32 i32 = 1 [default = -7];
  optional uint32 u32 = 2 [default = 4000000000];
  optional int64 i64 = 3 [default = -9000000000];
  optional uint64 u64 = 4 [default = 18446744073709551615];
  optional float fl = 5 [default = 1.5];
  optional double db = 6 [default = inf];
  optional bool ok = 7 [default = true];
  optional string s = 8 [default = "d\\u00e9f"];
  optional bytes b = 9 [default = "\\001\\002"];
  optional Color c = 10 [default = BLUE];
  optional Color plain = 11;
  optional int32 zero = 12;
  optional string none = 13;
  repeated int32 packed = 14 [packed = true];
  repeated sint64 unpacked = 15;
  optional Sub sub = 16;
  repeated Color colors = 17;
  map<string, Sub> by_name = 18;
  message Sub { optional int32 a = 1 [default = 3]; optional fixed64 f = 2; }
}
message Req { required int32 id = 1; optional string x = 2; }
"""


def _cls(schema: ProtoSchema, name: str) -> Any:
    return message_factory.GetMessageClass(schema.pool.FindMessageTypeByName(name))


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _tag(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _len(number: int, data: bytes) -> bytes:
    return _tag(number, 2) + _varint(len(data)) + data


def _normal(value: Any, typ: pa.DataType) -> Any:
    """A comparable Python value: maps as entry lists in their order, NaN as a marker."""
    if value is None:
        return None
    if pa.types.is_map(typ):
        return [(_normal(k, typ.key_type), _normal(v, typ.item_type)) for k, v in value]
    if pa.types.is_list(typ):
        return [_normal(v, typ.value_type) for v in value]
    if pa.types.is_struct(typ):
        return {f.name: _normal(value[f.name], f.type) for f in typ}
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, float) and value == 0.0:
        return ("zero", math.copysign(1.0, value))
    return value


def both(text: str, name: str | None, payloads: list[bytes], writer: str | None = None) -> list[Any]:
    """Decodes ``payloads`` through both paths; asserts equal results; returns the rows."""
    dec = ProtobufDecoder(text, name)
    assert dec.native
    native = dec.decode_arrow(pa.array(payloads, pa.binary()), writer or text)
    assert native is not None, "the native decoder refused a payload the runtime reads"
    large = dec.decode_arrow(pa.array(payloads, pa.large_binary()), writer or text)
    assert large is not None and large.type == native.type
    reference = dec.to_arrow(dec.decode_group(payloads, writer or text))
    assert native.type == reference.type == dec.arrow_type
    mine = [_normal(v, native.type) for v in native.to_pylist()]
    assert [_normal(v, large.type) for v in large.to_pylist()] == mine  # 64-bit offsets alike
    theirs = [_normal(v, reference.type) for v in reference.to_pylist()]
    for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
        assert a == b, f"payload {i}: native {a} != runtime {b}"
    return mine


def refused(text: str, name: str | None, payloads: list[bytes], good: bytes = b"\x00") -> list[Any]:
    """Asserts the native decoder refuses the group; returns the runtime's values/exceptions."""
    dec = ProtobufDecoder(text, name)
    assert dec.decode_arrow(pa.array(payloads, pa.binary()), text) is None
    assert (
        dec.decode_arrow(pa.array([good], pa.binary()), text) is not None
    )  # the decoder is clean after a refusal
    return dec.decode_group(payloads, text)


def test_every_proto3_kind_equals_the_runtime() -> None:
    schema = ProtoSchema.compile(ALL_TYPES)
    order = _cls(schema, "shop.v1.Order")
    full = order(
        i32=-5, s32=-6, sf32=7, u32=4_000_000_000, f32=3_000_000_000, i64=-2**40, s64=-2**63,
        sf64=2**63 - 1, u64=2**64 - 1, f64=2**63 + 5, fl=-0.0, db=float("nan"), ok=True,
        name="naïve 名前", raw=b"\x00\xff", status=2, tags=["a", "", "b"], counts={"k": 9, "": 0, "z": -1},
        line={"sku": "s", "qty": 0}, lines=[{"sku": "t", "qty": 2}, {}], by_no={3: {"sku": "u"}, -1: {}},
        card="c", maybe={"value": 0}, extra={"type_url": "t/x", "value": b"v"}, note="", history=[1, 7, 0],
    )  # fmt: skip
    full.at.FromMicroseconds(-1_700_000_000_123_456)
    full.took.FromMicroseconds(-1_500_001)
    full.nothing.SetInParent()
    extremes = order(i32=-(2**31), s32=2**31 - 1, u32=2**32 - 1, i64=2**63 - 1, fl=float("inf"), db=-0.0)
    extremes.at.FromNanoseconds(-999)  # nanos truncated toward zero: -0 µs
    payloads = [b"\x00" + m.SerializeToString() for m in (full, extremes, order(points=0), order())]
    rows = both(ALL_TYPES, "shop.v1.Order", [*payloads, b"\x00"])
    assert rows[0]["u32"] == 4_000_000_000 - 2**32 and rows[0]["u64"] == -1 and rows[0]["status"] == "CLOSED"
    assert rows[0]["history"] == ["OPEN", "UNKNOWN_ENUM_VALUE_Status_7", "STATUS_UNKNOWN"]
    assert rows[0]["fl"] == ("zero", -1.0) and rows[0]["db"] == "NaN" and rows[0]["maybe"] == {"value": None}
    assert rows[2]["points"] == 0 and rows[2]["card"] is None  # a oneof member set to zero is set
    assert rows[4]["tags"] == [] and rows[4]["line"] is None and rows[4]["note"] is None


def test_wire_level_cases_equal_the_runtime() -> None:
    line = _len(1, b"sku") + _tag(2, 0) + _varint(4)
    cases = [
        _tag(1, 0) + _varint(5) + _tag(1, 0) + _varint(0),  # last wins, and zero means unset (proto3)
        _tag(1, 0) + _varint(-3),  # int32 as a 10-byte varint
        _tag(1, 0) + _varint(2**32 + 9),  # int32 truncated to 32 bits
        _tag(13, 0) + _varint(2),  # bool: any non-zero varint is true
        _len(22, b"card") + _tag(23, 0) + _varint(4),  # oneof: the last member written wins
        _tag(23, 0) + _varint(4) + _len(22, b""),  # ... also when it is the zero value
        _len(30, _varint(1) + _varint(2) + _varint(9)) + _tag(30, 0) + _varint(0),  # packed + unpacked
        _len(17, b"x") + _len(17, b"y"),  # repeated strings
        _len(19, line) + _len(20, line) + _len(20, b""),  # message and repeated messages
        _len(18, _len(1, b"a") + _tag(2, 0) + _varint(3)) + _len(18, _len(1, b"b") + _tag(2, 0) + _varint(0)),
        _len(21, _tag(1, 0) + _varint(-2) + _len(2, line)),  # map<int32, Line>
        # a key and a value written twice in one entry: the last wins
        _len(18, _len(1, b"a") + _len(1, b"b") + _tag(2, 0) + _varint(3) + _tag(2, 0) + _varint(4)),
        _tag(99, 0) + _varint(1) + _tag(98, 1) + b"\x00" * 8 + _len(97, b"zz") + _tag(96, 5) + b"\x00" * 4,
        _len(
            24, _tag(2, 0) + _varint(5000) + _tag(1, 0) + _varint(7) + _tag(9, 0) + _varint(1)
        ),  # nanos first
        _len(25, b""),  # a Duration that is set but empty: 0, not null
        _len(26, b"") + _len(27, _len(1, b"type")),  # wrappers and Any set but (partly) empty
        _tag(29, 2) + _varint(0),  # proto3 optional set to "": present
        _tag(2, 0) + _varint(3) + _tag(7, 0) + _varint(2**64 - 1) + _tag(5, 5) + struct.pack("<I", 2**32 - 1),
        # values taken back out of their columns when replaced: a oneof member displaced and then
        # written again, an enum and a string first zero (null) then set, then set and zeroed again
        _len(22, b"a") + _tag(23, 0) + _varint(5) + _len(22, b"b"),
        _tag(16, 0) + _varint(0) + _tag(16, 0) + _varint(2) + _len(14, b"") + _len(14, b"xy"),
        _tag(16, 0) + _varint(1) + _tag(16, 0) + _varint(0) + _len(14, b"xy") + _len(14, b""),
        _tag(11, 5)
        + struct.pack("<f", 1.5)
        + _tag(11, 5)
        + struct.pack("<f", 0.0)
        + _tag(13, 0)
        + _varint(1),
        _tag(13, 0) + _varint(1) + _tag(13, 0) + _varint(0) + _tag(12, 1) + struct.pack("<d", 2.5),
    ]
    both(ALL_TYPES, "shop.v1.Order", [b"\x00" + c for c in cases])


def test_proto2_defaults_presence_and_closed_enums_equal_the_runtime() -> None:
    schema = ProtoSchema.compile(PROTO2)
    m = _cls(schema, "p2.M")
    msgs = [
        m(),
        m(
            i32=0,
            zero=0,
            none="",
            s="",
            c=1,
            packed=[1, -2, 3],
            unpacked=[-(2**63), 5],
            sub={},
            colors=[2, 1],
        ),
        m(sub={"f": 2**64 - 1}, by_name={"r": {"a": 1}, "b": {}}, u32=7, u64=2**63, fl=float("-inf"), b=b""),
    ]
    rows = both(PROTO2, "p2.M", [b"\x00" + x.SerializeToString() for x in msgs])
    assert rows[0]["i32"] == -7 and rows[0]["u32"] == 4_000_000_000 - 2**32 and rows[0]["u64"] == -1
    assert rows[0]["s"] == "déf" and rows[0]["b"] == b"\x01\x02" and rows[0]["c"] == "BLUE"
    assert rows[0]["plain"] is None and rows[0]["zero"] is None and rows[0]["sub"] is None
    assert rows[1]["zero"] == 0 and rows[1]["none"] == "" and rows[1]["sub"] == {"a": 3, "f": None}
    # packed written for an unpacked field, unpacked for a packed one: both accepted
    swapped = _tag(14, 0) + _varint(4) + _len(15, _varint(3) + _varint(4))
    both(PROTO2, "p2.M", [b"\x00" + swapped])
    # a missing proto2 required field: null, as the runtime (upb does not check) gives it
    assert both(PROTO2, "p2.Req", [b"\x02\x02" + _len(2, b"x")]) == [{"id": None, "x": "x"}]


def test_message_indexes_and_evolution_equal_the_runtime() -> None:
    text = 'syntax = "proto3"; package p; message Other { string x = 1; message Inner { int32 y = 1; } }'
    inner = _cls(ProtoSchema.compile(text), "p.Other.Inner")(y=3).SerializeToString()
    assert both(text, "p.Other.Inner", [b"\x04\x00\x00" + inner]) == [{"y": 3}]
    writer = 'syntax = "proto3"; message Order { int64 id = 1; string name = 2; double total = 3; }'
    reader = 'syntax = "proto3"; message Order { int64 id = 1; string region = 4; double total = 3; }'
    body = _cls(ProtoSchema.compile(writer), "Order")(id=1, name="x", total=2.5).SerializeToString()
    assert both(reader, None, [b"\x00" + body], writer) == [{"id": 1, "region": None, "total": 2.5}]
    # the reader message is the writer's second: indexes [1]; [0] (another message) is refused
    other = 'syntax = "proto3"; message A { int32 a = 1; } message Order { int64 id = 1; }'
    dec = ProtobufDecoder(reader)
    assert dec.decode_arrow(pa.array([b"\x02\x02" + body]), other) is not None
    assert dec.decode_arrow(pa.array([b"\x02\x02" + body, b"\x00" + body]), other) is None


def test_what_the_native_decoder_cannot_be_sure_of_is_refused_to_the_runtime() -> None:
    line = _len(1, b"a")
    invalid_utf8 = refused(ALL_TYPES, "shop.v1.Order", [b"\x00" + _len(14, b"\xff\xfe")])
    assert isinstance(invalid_utf8[0], Exception)  # proto3 strings must be UTF-8: malformed
    # "é" split over two records' values: their concatenation is UTF-8, neither value is
    split = refused(ALL_TYPES, "shop.v1.Order", [b"\x00" + _len(14, b"a\xc3"), b"\x00" + _len(14, b"\xa9b")])
    assert all(isinstance(r, Exception) for r in split)
    merged = refused(
        ALL_TYPES, "shop.v1.Order", [b"\x00" + _len(19, line) + _len(19, _tag(2, 0) + _varint(4))]
    )
    assert merged[0]["line"] == {"sku": "a", "qty": 4}  # the runtime merges a message written twice
    dup = refused(ALL_TYPES, "shop.v1.Order", [b"\x00" + _len(18, _len(1, b"k")) * 2])
    assert not isinstance(dup[0], Exception)
    group = refused(ALL_TYPES, "shop.v1.Order", [b"\x00" + _tag(90, 3) + _tag(90, 4)])
    assert not isinstance(group[0], Exception)  # an unknown group is skipped by the runtime
    closed = refused(PROTO2, "p2.M", [b"\x00" + _tag(11, 0) + _varint(3)])
    assert closed[0]["plain"] is None  # unknown number of a closed enum: an unknown field
    for replaced in (_len(14, b"\xff") + _len(14, b"ok"), _len(22, b"\xff") + _tag(23, 0) + _varint(1)):
        # a string replaced by a later value (or oneof member) is still parsed, and so rejected
        bad = refused(ALL_TYPES, "shop.v1.Order", [b"\x00" + replaced])
        assert isinstance(bad[0], Exception)
    bad_key = refused(ALL_TYPES, "shop.v1.Order", [b"\x00" + _len(18, _len(1, b"\xff") + _len(1, b"k"))])
    assert isinstance(bad_key[0], Exception)  # a replaced map key is parsed (and rejected) too
    oneof_msg = refused(ALL_TYPES, "shop.v1.Order", [b"\x00" + _len(24, b"") + _len(24, b"")])
    assert not isinstance(oneof_msg[0], Exception)
    truncated = refused(ALL_TYPES, "shop.v1.Order", [b"\x00" + b"\x0a\x05ab"])
    assert isinstance(truncated[0], Exception)
    wrong_wire = refused(ALL_TYPES, "shop.v1.Order", [b"\x00" + _tag(1, 5) + b"\x01\x00\x00\x00"])
    assert len(wrong_wire) == 1


def test_recursive_and_struct_messages_are_refused_by_both_paths_alike() -> None:
    struct_text = (
        'syntax = "proto3"; import "google/protobuf/struct.proto";'
        " message S { google.protobuf.Struct s = 1; }"
    )
    with pytest.raises(ProtobufRecursionError, match="recursive"):
        ProtobufDecoder(struct_text)  # google.protobuf.Value contains itself: refused at load()
    recursive = 'syntax = "proto3"; message N { int32 v = 1; N next = 2; }'
    with pytest.raises(ProtobufRecursionError):
        ProtobufDecoder(recursive)


def _random_order(order: Any, rng: random.Random) -> Any:
    msg = order()
    pick = rng.random
    if pick() < 0.5:
        msg.i32, msg.s32, msg.u32 = (
            rng.randint(-(2**31), 2**31 - 1),
            rng.randint(-5, 5),
            rng.randint(0, 2**32 - 1),
        )
    if pick() < 0.5:
        msg.i64, msg.f64, msg.sf64 = (
            rng.randint(-(2**63), 2**63 - 1),
            rng.randint(0, 2**64 - 1),
            rng.randint(-9, 9),
        )
    if pick() < 0.5:
        msg.fl, msg.db, msg.ok = rng.uniform(-1e6, 1e6), rng.choice([0.0, -0.0, 1e-300, 2.5]), pick() < 0.5
    if pick() < 0.5:
        msg.name, msg.raw = (
            rng.choice(["", "x", "é€😀", "long " * 20]),
            bytes(rng.randrange(256) for _ in range(3)),
        )
    msg.status = rng.choice([0, 1, 2, 9])
    msg.tags.extend(rng.choice(["a", "", "ü"]) for _ in range(rng.randrange(4)))
    for k in range(rng.randrange(3)):
        msg.counts[f"k{k}"] = rng.randint(-3, 3)
        msg.by_no[rng.randint(-2, 2)].qty = k
    if pick() < 0.5:
        msg.line.sku, msg.line.qty = "s", rng.randint(0, 2)
    for _ in range(rng.randrange(3)):
        msg.lines.add(sku=rng.choice(["", "t"]), qty=rng.randint(0, 3))
    if pick() < 0.3:
        msg.card = rng.choice(["", "c"])
    elif pick() < 0.5:
        msg.points = rng.randint(0, 5)
    if pick() < 0.5:
        msg.at.FromNanoseconds(rng.randint(-(10**18), 10**18))
        msg.took.FromNanoseconds(rng.randint(-(10**15), 10**15))
    if pick() < 0.3:
        msg.maybe.value = rng.randint(-1, 1)
    if pick() < 0.3:
        msg.note = rng.choice(["", "n"])
    msg.history.extend(rng.choice([0, 1, 2, 5]) for _ in range(rng.randrange(3)))
    return msg


def test_random_and_corrupted_payloads_are_equal_or_refused() -> None:
    """Random messages must decode equal; after flipping a byte, equal again or refused (never a
    different answer, never a value for a payload the runtime rejects)."""
    rng = random.Random(24)
    order = _cls(ProtoSchema.compile(ALL_TYPES), "shop.v1.Order")
    bodies = [_random_order(order, rng).SerializeToString() for _ in range(300)]
    both(ALL_TYPES, "shop.v1.Order", [b"\x00" + b for b in bodies])
    dec = ProtobufDecoder(ALL_TYPES, "shop.v1.Order")
    accepted = 0
    for body in bodies:
        if not body:
            continue
        bad = bytearray(body)
        bad[rng.randrange(len(bad))] = rng.randrange(256)
        payload = b"\x00" + bytes(bad)
        native = dec.decode_arrow(pa.array([payload], pa.binary()), ALL_TYPES)
        (reference,) = dec.decode_group([payload], ALL_TYPES)
        if native is None:
            continue
        accepted += 1
        assert not isinstance(reference, Exception), f"native read {payload.hex()}, the runtime: {reference}"
        want = _normal(dec.to_arrow([reference]).to_pylist()[0], dec.arrow_type)
        assert _normal(native.to_pylist()[0], dec.arrow_type) == want, payload.hex()
    assert accepted > 50  # most single-byte corruptions still parse: the comparison is exercised
