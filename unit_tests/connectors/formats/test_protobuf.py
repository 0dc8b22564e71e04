"""Protobuf: the wire format's message indexes, ``.proto`` compiling, Spark's type mapping, decode and encode.

No network: schemas are compiled by protoc (grpcio-tools) in-process, messages built with the
protobuf runtime's dynamic classes of the same descriptors.
"""

from __future__ import annotations

import base64
import datetime
import struct
from typing import Any

import pyarrow as pa
import pytest
from google.protobuf import descriptor_pb2, message_factory

from connector_base import ConnectorError
from connectors.formats.format_options import FormatKind, RecordFormatOptions
from connectors.formats.protobuf_decoder import MessageMismatchError, ProtobufDecoder
from connectors.formats.protobuf_encoder import ProtobufEncoder
from connectors.formats.protobuf_schema import (
    MessageIndexError,
    ProtobufSchemaError,
    ProtoSchema,
    decode_message_indexes,
    encode_message_indexes,
    is_serialized_descriptor,
)
from connectors.formats.protobuf_types import ProtobufRecursionError, message_arrow_types

ALL_TYPES = """
syntax = "proto3";
package shop.v1;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/any.proto";
import "google/protobuf/empty.proto";

enum Status { STATUS_UNKNOWN = 0; OPEN = 1; CLOSED = 2; }

message Order {
  int32 i32 = 1; sint32 s32 = 2; sfixed32 sf32 = 3; uint32 u32 = 4; fixed32 f32 = 5;
  int64 i64 = 6; sint64 s64 = 7; sfixed64 sf64 = 8; uint64 u64 = 9; fixed64 f64 = 10;
  float fl = 11; double db = 12; bool ok = 13; string name = 14; bytes raw = 15;
  Status status = 16;
  repeated string tags = 17;
  map<string, int64> counts = 18;
  Line line = 19;
  repeated Line lines = 20;
  map<int32, Line> by_no = 21;
  oneof pay { string card = 22; int64 points = 23; }
  google.protobuf.Timestamp at = 24;
  google.protobuf.Duration took = 25;
  google.protobuf.Int32Value maybe = 26;
  google.protobuf.Any extra = 27;
  google.protobuf.Empty nothing = 28;
  optional string note = 29;
  repeated Status history = 30;
  message Line { string sku = 1; int32 qty = 2; }
}

message Other { string x = 1; message Inner { int32 y = 1; } }
"""


def _order_schema() -> ProtoSchema:
    return ProtoSchema.compile(ALL_TYPES)


def _cls(schema: ProtoSchema, name: str) -> Any:
    return message_factory.GetMessageClass(schema.pool.FindMessageTypeByName(name))


def test_message_indexes_round_trip_with_zigzag_and_the_zero_shortcut() -> None:
    assert encode_message_indexes([0]) == b"\x00"
    assert decode_message_indexes(b"\x00rest") == ([0], 1)
    # count 2 (zig-zag 4), indexes 1 (2) and 0 (0): Confluent's encoding of [1, 0]
    assert encode_message_indexes([1, 0]) == b"\x04\x02\x00"
    assert decode_message_indexes(b"\x04\x02\x00", 0) == ([1, 0], 3)
    assert decode_message_indexes(encode_message_indexes([70, 3, 200])) == (
        [70, 3, 200],
        6,
    )  # 1 + 2 + 1 + 2 bytes
    with pytest.raises(MessageIndexError, match="truncated"):
        decode_message_indexes(b"\x04\x02")
    with pytest.raises(MessageIndexError, match="truncated"):
        decode_message_indexes(b"")
    with pytest.raises(MessageIndexError, match="count"):
        decode_message_indexes(b"\x03\x02")  # a negative count


def test_spark_type_mapping() -> None:
    schema = _order_schema()
    _wire, spark = message_arrow_types(schema.message("shop.v1.Order"))
    line = pa.struct([("sku", pa.string()), ("qty", pa.int32())])

    def rep(t: pa.DataType) -> pa.DataType:
        return pa.list_(pa.field("element", t, nullable=False))

    def mp(k: pa.DataType, v: pa.DataType) -> pa.DataType:
        return pa.map_(k, pa.field("value", v, nullable=False))

    expected = [
        *(("i32", pa.int32()), ("s32", pa.int32()), ("sf32", pa.int32()), ("u32", pa.int32())),
        ("f32", pa.int32()),
        *(("i64", pa.int64()), ("s64", pa.int64()), ("sf64", pa.int64()), ("u64", pa.int64())),
        ("f64", pa.int64()),
        *(("fl", pa.float32()), ("db", pa.float64()), ("ok", pa.bool_()), ("name", pa.string())),
        ("raw", pa.binary()),
        ("status", pa.string()),
        ("tags", rep(pa.string())),
        ("counts", mp(pa.string(), pa.int64())),
        ("line", line),
        ("lines", rep(line)),
        ("by_no", mp(pa.int32(), line)),
        ("card", pa.string()),
        ("points", pa.int64()),
        ("at", pa.timestamp("us", tz="UTC")),
        ("took", pa.duration("us")),
        ("maybe", pa.struct([("value", pa.int32())])),
        ("extra", pa.struct([("type_url", pa.string()), ("value", pa.binary())])),
        # google.protobuf.Empty: dropped, as Spark drops a message without fields
        ("note", pa.string()),
        ("history", rep(pa.string())),
    ]
    assert spark == pa.struct(expected)


def test_recursive_messages_are_refused_naming_the_field() -> None:
    schema = ProtoSchema.compile(
        'syntax = "proto3"; message Person { string name = 1; Group g = 2; }'
        " message Group { repeated Person members = 1; }"
    )
    with pytest.raises(ProtobufRecursionError, match=r"Group.members .*Person -> Group -> Person"):
        message_arrow_types(schema.message("Person"))


def test_compile_errors_name_line_and_column() -> None:
    with pytest.raises(ProtobufSchemaError, match=r"registry_schema.proto:1:\d+: .*Nope.* is not defined"):
        ProtoSchema.compile('syntax = "proto3"; message A { Nope x = 1; }')
    with pytest.raises(ProtobufSchemaError, match="no message 'Missing'.*shop.v1.Order"):
        _order_schema().message("Missing")


def test_decoding_matches_the_protobuf_runtime_and_sparks_null_rules() -> None:
    schema = _order_schema()
    order = _cls(schema, "shop.v1.Order")
    msg = order(
        i32=-5, s32=-6, sf32=7, u32=4_000_000_000, f32=3, i64=-2**40, u64=2**63 + 5, fl=1.5, db=2.25,
        ok=True, name="n", raw=b"\x00\x01", status=2, tags=["a", "b"], counts={"k": 9},
        line={"sku": "s", "qty": 0}, lines=[{"sku": "t", "qty": 2}], by_no={3: {"sku": "u", "qty": 1}},
        points=11, maybe={"value": 0}, note="", history=[1, 7],
    )  # fmt: skip
    msg.at.FromMicroseconds(1_700_000_000_123_456)
    msg.took.FromMicroseconds(-1_500_000)
    dec = ProtobufDecoder(ALL_TYPES, "shop.v1.Order")
    out = dec.decode_group([b"\x00" + msg.SerializeToString(), b"\x00"], ALL_TYPES)
    row, empty = dec.to_arrow(out).to_pylist()
    assert row["u32"] == 4_000_000_000 - 2**32 and row["u64"] == 2**63 + 5 - 2**64  # Java's signed view
    assert (row["i32"], row["s32"], row["sf32"], row["i64"], row["fl"]) == (-5, -6, 7, -(2**40), 1.5)
    assert row["raw"] == b"\x00\x01" and row["status"] == "CLOSED"
    assert row["history"] == ["OPEN", "UNKNOWN_ENUM_VALUE_Status_7"]
    assert row["tags"] == ["a", "b"] and row["counts"] == [("k", 9)]
    assert row["line"] == {"sku": "s", "qty": None}  # proto3 zero value: not set, null as in Spark
    assert row["lines"] == [{"sku": "t", "qty": 2}] and row["by_no"] == [(3, {"sku": "u", "qty": 1})]
    assert row["card"] is None and row["points"] == 11  # oneof: the member set
    assert row["at"] == datetime.datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=datetime.UTC)
    assert row["took"] == datetime.timedelta(seconds=-1.5)
    assert row["maybe"] == {"value": None} and row["note"] == ""  # proto3 optional: set to ""
    assert row["s64"] is None and row["extra"] is None and row["status"] is not None
    # an empty message: singular fields null, repeated and maps empty (Spark's from_protobuf)
    assert empty["i32"] is None and empty["line"] is None and empty["note"] is None
    assert empty["tags"] == [] and empty["counts"] == [] and empty["lines"] == []


def test_map_entries_keep_the_wire_order_on_both_paths_and_a_repeated_key_its_first_place() -> None:
    """The runtime iterates a map in its hash table's order; Spark's from_protobuf and the native
    decoder keep the wire's order, and so must the Python path (the oracle test checks Spark)."""
    counts = [("zz", 1), ("a", 2), ("m", 3), ("b", 4), ("q", 5)]
    wire = b""
    for key, value in counts:
        body = b"\x0a" + bytes([len(key)]) + key.encode() + b"\x10" + bytes([value])
        wire += b"\x92\x01" + bytes([len(body)]) + body  # field 18, length-delimited
    for no, line in [(9, b"\x0a\x01x"), (2, b"\x10\x02"), (5, b"")]:
        body = b"\x08" + bytes([no]) + b"\x12" + bytes([len(line)]) + line
        wire += b"\xaa\x01" + bytes([len(body)]) + body  # field 21
    dec = ProtobufDecoder(ALL_TYPES, "shop.v1.Order")
    by_no = [(9, {"sku": "x", "qty": None}), (2, {"sku": None, "qty": 2}), (5, {"sku": None, "qty": None})]
    (python_row,) = dec.to_arrow(dec.decode_group([b"\x00" + wire], ALL_TYPES)).to_pylist()
    assert python_row["counts"] == counts and python_row["by_no"] == by_no
    native = dec.decode_arrow(pa.array([b"\x00" + wire], pa.binary()), ALL_TYPES)
    if dec.native:
        assert native is not None and native.to_pylist() == [python_row]
    twice = wire + b"\x92\x01\x05\x0a\x01a\x10\x09"  # key "a" again, value 9
    (row,) = dec.to_arrow(dec.decode_group([b"\x00" + twice], ALL_TYPES)).to_pylist()
    assert row["counts"] == [("zz", 1), ("a", 9), ("m", 3), ("b", 4), ("q", 5)]  # Protobuf: last value


def test_proto2_explicit_defaults_are_read_for_unset_fields() -> None:
    text = 'syntax = "proto2"; message P { optional int32 a = 1 [default = 42]; optional string b = 2; }'
    dec = ProtobufDecoder(text)
    assert dec.to_arrow(dec.decode_group([b"\x00"], text)).to_pylist() == [{"a": 42, "b": None}]


def test_evolution_by_field_number_and_writer_message_checks() -> None:
    writer = 'syntax = "proto3"; message Order { int64 id = 1; string name = 2; double total = 3; }'
    reader = 'syntax = "proto3"; message Order { int64 id = 1; string region = 4; double total = 3; }'
    w = ProtoSchema.compile(writer)
    body = _cls(w, "Order")(id=1, name="x", total=2.5).SerializeToString()
    dec = ProtobufDecoder(reader)
    assert dec.new_fields(dec.writer_schema(writer)) == ["name"]
    rows = dec.to_arrow(dec.decode_group([b"\x00" + body], writer)).to_pylist()
    assert rows == [{"id": 1, "region": None, "total": 2.5}]  # unknown field ignored, missing null
    other = 'syntax = "proto3"; message A { int32 a = 1; } message Order { int64 id = 1; }'
    out = dec.decode_group([b"\x02\x02" + body, b"\x02\x04" + body, b"\x00" + body, b"\x04\x02"], other)
    assert isinstance(out[0], dict) and out[0]["id"] == 1  # indexes [1]: Order
    assert isinstance(out[1], MessageIndexError) and "out of range" in str(out[1])
    assert isinstance(out[2], MessageMismatchError) and "written as message A" in str(out[2])
    assert isinstance(out[3], MessageIndexError) and "truncated" in str(out[3])
    bad = dec.decode_group([b"\x00\x0a\x05ab"], writer)  # a string field cut short
    assert type(bad[0]).__name__ == "DecodeError"


def test_nested_message_indexes_and_serialized_descriptors() -> None:
    text = 'syntax = "proto3"; package p; message Other { string x = 1; message Inner { int32 y = 1; } }'
    schema = ProtoSchema.compile(text)
    inner = schema.message("p.Other.Inner")
    assert schema.indexes_of(inner) == [0, 0] and schema.message_by_indexes([0, 0]) is inner
    proto = descriptor_pb2.FileDescriptorProto()
    schema.file.CopyToProto(proto)
    serialized = base64.b64encode(proto.SerializeToString()).decode()
    assert is_serialized_descriptor(serialized) and not is_serialized_descriptor(text)
    dec = ProtobufDecoder(serialized, "p.Other.Inner")  # what confluent-kafka's serializer registers
    body = _cls(schema, "p.Other.Inner")(y=3).SerializeToString()
    assert dec.to_arrow(dec.decode_group([b"\x04\x00\x00" + body], text)).to_pylist() == [{"y": 3}]


def test_imports_of_registry_references() -> None:
    common = 'syntax = "proto3"; package c; message Money { int64 units = 1; string currency = 2; }'
    text = 'syntax = "proto3"; import "c/money.proto"; message Pay { c.Money amount = 1; }'
    dec = ProtobufDecoder(text, references=[("c/money.proto", common)])
    assert dec.arrow_type == pa.struct(
        [("amount", pa.struct([("units", pa.int64()), ("currency", pa.string())]))]
    )
    with pytest.raises(ProtobufSchemaError, match="c/money.proto"):
        ProtoSchema.compile(text)


def test_encoder_round_trips_through_the_decoder_with_the_header() -> None:
    dec = ProtobufDecoder(ALL_TYPES, "shop.v1.Order")
    rows = [
        {
            "i32": -1, "u32": -2, "u64": -3, "name": "n", "status": "OPEN", "tags": ["x"],
            "counts": [("k", 2)], "line": {"sku": "s", "qty": 3}, "by_no": [(1, {"sku": "t", "qty": 1})],
            "card": "c", "at": datetime.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=datetime.UTC),
            "took": datetime.timedelta(seconds=90, microseconds=5), "history": ["CLOSED"],
        },
        None,
    ]  # fmt: skip
    column = pa.array(rows, dec.arrow_type)
    encoded = ProtobufEncoder(ALL_TYPES, 7, "shop.v1.Order").encode(column, "value")
    assert (
        encoded[1] is None and encoded[0] is not None and encoded[0][:6] == struct.pack(">bI", 0, 7) + b"\x00"
    )
    back = dec.to_arrow(dec.decode_group([encoded[0][5:]], ALL_TYPES)).to_pylist()[0]
    for key, value in rows[0].items():  # type: ignore[union-attr]
        assert back[key] == value, key
    nested = ProtobufEncoder(ALL_TYPES, 9, "shop.v1.Other").encode(pa.array([{"x": "a"}]), "value")
    assert nested[0] is not None and nested[0][5:7] == b"\x02\x02"  # message indexes [1]
    with pytest.raises(ConnectorError, match=r"row 0 of the value column .* shop.v1.Order.*NOPE"):
        ProtobufEncoder(ALL_TYPES, 7).encode(pa.array([{"status": "NOPE"}]), "value")


def test_format_options_accept_protobuf_confluent() -> None:
    opts = RecordFormatOptions.parse(
        {
            "valueFormat": "protobuf-confluent",
            "schemaRegistry.url": "http://localhost:1",
            "valueRecordName": "a.B",
        }
    )
    assert opts.value.kind is FormatKind.PROTOBUF_CONFLUENT and opts.value.kind.schema_type == "PROTOBUF"
    assert opts.value.kind.uses_registry and opts.value.record_name == "a.B"
