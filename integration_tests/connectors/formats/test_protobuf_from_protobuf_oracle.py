"""Every Protobuf type decodes to what Spark's own ``from_protobuf`` gives: same Spark type, same values.

The oracle is spark-protobuf from Maven Central in a child Spark (``from_protobuf_oracle``), given
the descriptor set protoc writes (``--include_imports --descriptor_set_out``); our side is
``ProtobufDecoder`` compiling the same ``.proto`` text. Payloads come from the protobuf runtime.
Both are compared as Arrow values and as Spark type strings, field by field.

The package mirror these machines reach does not serve spark-protobuf (no version of
``org.apache.spark:spark-protobuf_2.13`` resolved on 2026-11-25, while spark-avro does): the test
then skips, naming the artifact; where Maven Central serves it, or where
``SPARKFLOW_SPARK_PROTOBUF_JARS`` names a build of it from Spark's source
(``tools/build_spark_protobuf.sh``), it runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from connectors.formats.protobuf_decoder import ProtobufDecoder
from integration_tests.connectors.formats.from_avro_oracle import run_oracle
from unit_tests.connectors.formats.test_protobuf_native import _len, _tag, _varint

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(600)]

EVERY_TYPE = """
syntax = "proto3";
package oracle;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/any.proto";
import "google/protobuf/empty.proto";

enum Color { RED = 0; GREEN = 1; BLUE = 2; }

message Every {
  int32 i32 = 1; sint32 s32 = 2; sfixed32 sf32 = 3; uint32 u32 = 4; fixed32 f32 = 5;
  int64 i64 = 6; sint64 s64 = 7; sfixed64 sf64 = 8; uint64 u64 = 9; fixed64 f64 = 10;
  float fl = 11; double db = 12; bool ok = 13; string s = 14; bytes by = 15;
  Color color = 16;
  repeated int64 nums = 17;
  repeated Color colors = 18;
  map<string, int32> counts = 19;
  map<int64, Inner> inners = 20;
  Inner inner = 21;
  repeated Inner list = 22;
  oneof choice { string text = 23; int32 number = 24; Inner nested = 25; }
  google.protobuf.Timestamp ts = 26;
  google.protobuf.Duration dur = 27;
  google.protobuf.StringValue sv = 28;
  google.protobuf.Int64Value iv = 29;
  google.protobuf.Any any = 30;
  google.protobuf.Empty empty = 31;
  optional int32 opt = 32;
  message Inner { string name = 1; repeated bool flags = 2; Color c = 3; }
}
"""

PROTO2 = """
syntax = "proto2";
package oracle2;
message Old {
  optional int32 a = 1 [default = 42];
  optional string b = 2 [default = "dflt"];
  required int64 c = 3;
  optional E e = 4 [default = TWO];
  repeated int32 r = 5;
  enum E { ONE = 1; TWO = 2; }
}
"""


def _descriptor_set(tmp: Path, text: str) -> bytes:
    from grpc_tools import protoc

    (tmp / "oracle.proto").write_text(text)
    include = Path(protoc.__file__).parent / "_proto"
    out = tmp / "oracle.desc"
    args = ["protoc", f"-I{tmp}", f"-I{include}", "--include_imports", f"--descriptor_set_out={out}"]
    assert protoc.main([*args, "oracle.proto"]) == 0
    return out.read_bytes()


def _classes(descriptor_set: bytes) -> Any:
    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(descriptor_set).file:
        pool.AddSerializedFile(f.SerializeToString())
    return lambda name: message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def _every_payloads(cls: Any) -> list[bytes]:
    every, inner = cls("oracle.Every"), cls("oracle.Every.Inner")
    out = [every().SerializeToString()]  # all unset
    for k in range(1, 7):
        m = every(
            i32=-k, s32=-2 * k, sf32=3 * k, u32=4_000_000_000 + k, f32=2**31 + k,
            i64=-(2**40) - k, s64=k, sf64=-k, u64=2**64 - k, f64=k,
            fl=1.5 * k, db=-0.25 * k, ok=k % 2 == 0, s=f"str{k}é", by=bytes([k, 0, 255]),
            color=k % 3, nums=[k, 0, -k], colors=[0, 2, 1], counts={"a": k, "zero": 0},
            inners={k: inner(name=f"i{k}", flags=[True, False], c=1)},
            inner=inner(name="" if k % 2 else "x", c=k % 3), list=[inner(name="l")] * (k % 3),
            ts={"seconds": 1_700_000_000 + k * 86_400, "nanos": 123_456_789 * (k % 2)},
            dur={"seconds": -k if k % 2 else k, "nanos": -500_000 if k % 2 else 999_999},
            sv={"value": f"w{k}"} if k % 2 else {}, iv={"value": k},
            any={"type_url": "type.googleapis.com/x.Y", "value": b"\x08\x01"},
        )  # fmt: skip
        if k % 3 == 0:
            m.text = f"t{k}"
        elif k % 3 == 1:
            m.number = 0  # a oneof member set to its zero value: present
        else:
            m.nested.name = "n"
        if k % 2:
            m.opt = 0
            m.empty.SetInParent()
        out.append(m.SerializeToString())
    return out


def _spark_type(arrow: pa.DataType) -> str:
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(arrow, prefer_timestamp_ntz=True).simpleString()


def _require_spark_protobuf() -> None:
    from integration_tests.connectors.formats.from_protobuf_oracle import (
        JARS_ENV,
        SPARK_PROTOBUF,
        spark_protobuf_jars,
    )
    from sparkflow_testing.maven import MavenError

    try:
        spark_protobuf_jars()
    except MavenError:
        pytest.skip(
            f"{SPARK_PROTOBUF} is not served by the Maven repository this machine reaches "
            f"(a local build can be named in {JARS_ENV}: tools/build_spark_protobuf.sh)"
        )


def _map_payloads(cls: Any) -> tuple[list[bytes], bytes]:
    """Maps whose entries the wire orders against any hash order, and one with a key written twice
    (an entry: key field 1, value field 2)."""
    inner = cls("oracle.Every.Inner")
    base = cls("oracle.Every")(i32=7).SerializeToString()
    ordered = base + b"".join(
        _len(19, _len(1, k.encode()) + _tag(2, 0) + _varint(v))
        for k, v in [("zz", 1), ("a", 2), ("m", 3), ("b", 4)]
    )
    ordered += b"".join(
        _len(20, _tag(1, 0) + _varint(k) + _len(2, m))
        for k, m in [
            (9, inner(name="nine").SerializeToString()),
            (2, inner(c=2).SerializeToString()),
            (5, b""),
        ]
    )
    twice = base + b"".join(
        _len(19, _len(1, k.encode()) + _tag(2, 0) + _varint(v)) for k, v in [("a", 1), ("zero", 0), ("a", 2)]
    )
    return [ordered], twice


def _first_place_last_value(pairs: list[tuple[Any, Any]] | None) -> list[tuple[Any, Any]] | None:
    return None if pairs is None else list(dict(pairs).items())


def test_every_protobuf_type_matches_spark_from_protobuf(tmp_path: Path) -> None:
    _require_spark_protobuf()
    every_set = _descriptor_set(tmp_path, EVERY_TYPE)
    (tmp_path / "p2").mkdir()
    old_set = _descriptor_set(tmp_path / "p2", PROTO2)
    ordered, twice = _map_payloads(_classes(every_set))
    every = _every_payloads(_classes(every_set)) + ordered
    old_cls = _classes(old_set)("oracle2.Old")
    old = [old_cls(c=1).SerializeToString(), old_cls(a=0, b="", c=0, e=1, r=[3]).SerializeToString()]
    cases = [
        {"descriptor_set": every_set.hex(), "message": "oracle.Every", "payloads": [p.hex() for p in every]},
        {"descriptor_set": old_set.hex(), "message": "oracle2.Old", "payloads": [p.hex() for p in old]},
        {"descriptor_set": every_set.hex(), "message": "oracle.Every", "payloads": [twice.hex()]},
    ]
    results = run_oracle("integration_tests.connectors.formats.from_protobuf_oracle", cases)
    for (text, message, payloads), (spark_type, spark_table) in zip(
        [
            (EVERY_TYPE, "oracle.Every", every),
            (PROTO2, "oracle2.Old", old),
            (EVERY_TYPE, "oracle.Every", [twice]),
        ],
        results,
        strict=True,
    ):
        decoder = ProtobufDecoder(text, message)
        assert decoder.native, "the compiled module is part of every test install"
        framed = [b"\x00" + p for p in payloads]
        python_path = decoder.to_arrow(decoder.decode_group(framed, text))
        native_path = decoder.decode_arrow(pa.array(framed, pa.binary()), text)
        spark_rows = spark_table.column("v").combine_chunks().to_pylist()
        assert _spark_type(python_path.type) == spark_type
        maps = {f.name for f in python_path.type if pa.types.is_map(f.type)}
        for name in [f.name for f in python_path.type]:
            theirs = [r[name] for r in spark_rows]
            if payloads == [twice] and name == "counts":
                # Spark keeps both entries of key "a"; Protobuf's rule (and ours) is the last value,
                # here in the key's first place
                assert theirs == [[("a", 1), ("zero", 0), ("a", 2)]]
                theirs = [_first_place_last_value(p) for p in theirs]
            assert [r[name] for r in python_path.to_pylist()] == theirs, name
            if native_path is not None:
                assert [r[name] for r in native_path.to_pylist()] == theirs, (name, "native")
            assert name not in maps or payloads != every or any(theirs), name
        # the native decoder answers every group but the one with a key written twice, which it
        # leaves to the Python path
        assert (native_path is None) == (payloads == [twice])
