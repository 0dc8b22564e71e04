"""``valueFormat=protobuf-confluent`` on real Kafka with a real registry (Apicurio 2.6).

Interoperability is the oracle, both ways: records written by confluent-kafka's own
``ProtobufSerializer`` (message classes generated from the ``.proto`` by protoc at test time; it
registers the schema as a serialized descriptor and the imported file as a reference subject) are
read by ``kafka-unified``; the sink writes them back with that registered schema, and
confluent-kafka's ``ProtobufDeserializer`` reads the sink's records equal to the originals. The
second test registers ``.proto`` text (what users register by hand) and checks evolution by field
number and the errors a bad record gets.
"""

from __future__ import annotations

import datetime
import struct
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from integration_tests.connectors.formats.protoc_modules import generated_module
from integration_tests.connectors.kafka.helpers import reader
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.registry.apicurio import SchemaRegistryServer

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(300)]

MONEY = """
syntax = "proto3";
package sparkflow.it.common;
message Money { int64 units = 1; string currency = 2; }
"""

ORDER = """
syntax = "proto3";
package sparkflow.it;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "sparkflow_it_money.proto";

message Order {
  int64 id = 1;
  string customer = 2;
  Status status = 3;
  repeated string items = 4;
  map<string, int32> attrs = 5;
  Address address = 6;
  google.protobuf.Timestamp placed = 7;
  oneof payment { string card = 8; int64 voucher = 9; }
  google.protobuf.DoubleValue discount = 10;
  sparkflow.it.common.Money total = 11;
  uint32 flags = 12;
  enum Status { NEW = 0; PAID = 1; SHIPPED = 2; }
  message Address { string city = 1; repeated int32 zip = 2; }
}
"""


@pytest.fixture(scope="module")
def order_pb2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The generated message module (protoc --python_out), as a producer application has it."""
    protos = {"sparkflow_it_money.proto": MONEY, "sparkflow_it_order.proto": ORDER}
    with generated_module(tmp_path_factory.mktemp("order_proto"), protos) as module:
        yield module


def _order(pb: Any, i: int) -> Any:
    msg = pb.Order(
        id=i,
        customer=f"c{i}" if i % 2 else "",
        status=i % 3,
        items=[f"s{j}" for j in range(i % 3)],
        attrs={"n": i},
        address=pb.Order.Address(city=f"city{i}", zip=[i, i + 1]),
        flags=4_000_000_000 + i,
    )
    msg.placed.FromMicroseconds(1_700_000_000_000_000 + i * 1_001)
    if i % 2:
        msg.card = f"card{i}"
    else:
        msg.voucher = i
    if i % 4:
        msg.discount.value = i / 4
    msg.total.units, msg.total.currency = i * 100, "EUR"
    return msg


EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _expected(i: int) -> dict[str, Any]:
    """The row Spark's from_protobuf gives for ``_order(i)`` (proto3 zero values read as null)."""
    return {
        "id": i or None,
        "customer": f"c{i}" if i % 2 else None,
        "status": ["NEW", "PAID", "SHIPPED"][i % 3] if i % 3 else None,
        "items": [f"s{j}" for j in range(i % 3)],
        "attrs": {"n": i},  # map values are read as they are, zero included
        "address": {"city": f"city{i}", "zip": [i, i + 1]},
        "placed": EPOCH + datetime.timedelta(microseconds=1_700_000_000_000_000 + i * 1_001),
        "card": f"card{i}" if i % 2 else None,
        "voucher": None if i % 2 else i,
        "discount": {"value": i / 4} if i % 4 else None,
        "total": {"units": i * 100 or None, "currency": "EUR"},
        "flags": 4_000_000_000 + i - 2**32,
    }


def _plain(v: Any) -> Any:
    if hasattr(v, "asDict"):
        return {k: _plain(x) for k, x in v.asDict().items()}
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, datetime.datetime):
        return v.astimezone(datetime.UTC)
    return v


def _consume(broker: KafkaBroker, topic: str, want: int) -> list[bytes]:
    consumer = broker.consumer()
    consumer.subscribe([topic])
    out: list[bytes] = []
    try:
        for _ in range(30):
            out += [m.value() for m in consumer.consume(100, 1.0) if not m.error()]
            if len(out) >= want:
                break
    finally:
        consumer.close()
    return out


def test_confluent_protobuf_serializer_records_read_and_written_back(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer, order_pb2: Any
) -> None:
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    src, dst = reference_broker.create_topic(1), reference_broker.create_topic(1)
    ser = ProtobufSerializer(order_pb2.Order, schema_registry.client(), {"use.deprecated.format": False})
    messages = [_order(order_pb2, i) for i in range(10)]
    ctx = SerializationContext(src, MessageField.VALUE)
    reference_broker.produce(src, [ser(m, ctx) for m in messages] + [b"\x00\x00\x00\x00\x01\x00\x0a\x7f"])
    df = reader(
        spark, reference_broker, subscribe=src, valueFormat="protobuf-confluent", mode="DROPMALFORMED",
        **{"schemaRegistry.url": schema_registry.url},
    ).load()  # fmt: skip
    assert df.schema.simpleString().startswith(
        "struct<key:binary,id:bigint,customer:string,status:string,items:array<string>,attrs:map<string,int>,"
        "address:struct<city:string,zip:array<int>>,placed:timestamp,card:string,voucher:bigint,"
        "discount:struct<value:double>,total:struct<units:bigint,currency:string>,flags:int,topic:string"
    )
    rows = sorted(df.collect(), key=lambda r: r["offset"])
    fields = list(_expected(0))
    assert [{k: _plain(r[k]) for k in fields} for r in rows] == [_expected(i) for i in range(10)]

    (
        df.selectExpr(f"struct({', '.join(fields)}) as value")
        .write.format("kafka-unified")
        .option("kafka.bootstrap.servers", reference_broker.bootstrap)
        .options(topic=dst, valueFormat="protobuf-confluent", valueSubject=f"{src}-value")
        .option("schemaRegistry.url", schema_registry.url)
        .mode("append")
        .save()
    )
    de = ProtobufDeserializer(order_pb2.Order, {"use.deprecated.format": False}, schema_registry.client())
    got = [de(v, SerializationContext(dst, MessageField.VALUE)) for v in _consume(reference_broker, dst, 10)]
    assert sorted(got, key=lambda m: m.id) == messages


ORDER_V1 = 'syntax = "proto3"; package ev; message Order { int64 id = 1; string name = 2; }'
ORDER_V2 = 'syntax = "proto3"; package ev; message Order { int64 id = 1; double total = 3; }'
RECURSIVE = 'syntax = "proto3"; message Node { string v = 1; repeated Node children = 2; }'


def _header(schema_id: int) -> bytes:
    return struct.pack(">bI", 0, schema_id)


def test_proto_text_schemas_evolution_and_errors(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    from google.protobuf import message_factory

    from connectors.formats.protobuf_schema import ProtoSchema

    topic = reference_broker.create_topic(1)
    subject = f"{topic}-value"
    v1 = schema_registry.register(subject, ORDER_V1, "PROTOBUF")
    v2 = schema_registry.register(subject, ORDER_V2, "PROTOBUF")

    def body(text: str, **fields: Any) -> bytes:
        schema = ProtoSchema.compile(text)
        return bytes(message_factory.GetMessageClass(schema.message(None))(**fields).SerializeToString())

    good = [
        _header(v1) + b"\x00" + body(ORDER_V1, id=1, name="a"),
        _header(v2) + b"\x00" + body(ORDER_V2, id=2, total=2.5),
    ]
    unknown_id = 999_999
    bad = [
        _header(unknown_id) + b"\x00",
        b"\x01" + _header(v1)[1:] + b"\x00",  # wrong magic byte
        _header(v1) + b"\x02\x06" + body(ORDER_V1, id=3),  # message index 3: v1 has one message
        _header(v1) + b"\x00" + body(ORDER_V1, id=4, name="long name")[:-3],  # truncated
    ]
    reference_broker.produce(topic, [*good, *bad])

    def base(**options: str) -> Any:  # a new reader each time (a DataFrameReader keeps its options)
        return reader(
            spark, reference_broker, subscribe=topic, valueFormat="protobuf-confluent",
            **{"schemaRegistry.url": schema_registry.url}, **options,
        )  # fmt: skip

    latest = base(mode="DROPMALFORMED").load()  # reader v2: v1's name ignored, total null
    assert [(r["id"], r["total"]) for r in sorted(latest.collect(), key=lambda r: r["id"])] == [
        (1, None),
        (2, 2.5),
    ]
    older = base(mode="DROPMALFORMED", valueSchemaVersion="1").load()
    assert [(r["id"], r["name"]) for r in sorted(older.collect(), key=lambda r: r["id"])] == [
        (1, "a"),
        (2, None),
    ]
    rows = sorted(base(mode="PERMISSIVE").load().collect(), key=lambda r: r["offset"])
    reasons = [r["_corrupt_record"] for r in rows]
    assert reasons[:2] == [None, None] and all(r["id"] is None for r in rows[2:])
    where = f"topic '{topic}', partition 0, offset"
    assert reasons[2].startswith(f"{where} 2: unknown value schema id {unknown_id}")
    assert reasons[3].startswith(f"{where} 3: the value is not in the Confluent wire format")
    assert reasons[4].startswith(f"{where} 4: malformed Protobuf value (schema id {v1}): MessageIndexError")
    assert "out of range" in reasons[4]
    assert reasons[5].startswith(f"{where} 5: malformed Protobuf value (schema id {v1}): DecodeError")
    with pytest.raises(Exception, match=rf"{where} 2: unknown value schema id {unknown_id}.*FAILFAST"):
        base().load().collect()

    # the sink registers inline .proto text (autoRegisterSchemas) and writes v1 records; read back
    out = reference_broker.create_topic(1)
    (
        older.where("name is not null")
        .selectExpr("struct(id, name) as value")
        .write.format("kafka-unified")
        .option("kafka.bootstrap.servers", reference_broker.bootstrap)
        .options(
            topic=out, valueFormat="protobuf-confluent", valueSchema=ORDER_V1, autoRegisterSchemas="true"
        )
        .option("schemaRegistry.url", schema_registry.url)
        .mode("append")
        .save()
    )
    back = reader(
        spark, reference_broker, subscribe=out, valueFormat="protobuf-confluent",
        **{"schemaRegistry.url": schema_registry.url},
    ).load()  # fmt: skip
    assert [(r["id"], r["name"]) for r in back.collect()] == [(1, "a")]
    with pytest.raises(Exception, match=r"not registered under subject .*autoRegisterSchemas=true"):
        (
            older.selectExpr("struct(id) as value")
            .write.format("kafka-unified")
            .option("kafka.bootstrap.servers", reference_broker.bootstrap)
            .options(topic=out, valueFormat="protobuf-confluent", valueSchema=ORDER_V2 + "\n// unregistered")
            .option("schemaRegistry.url", schema_registry.url)
            .mode("append")
            .save()
        )

    recursive_subject = f"rec-{uuid.uuid4().hex}"
    schema_registry.register(recursive_subject, RECURSIVE, "PROTOBUF")
    with pytest.raises(Exception, match=r"recursive reference .*Node.children.*recursive.fields.max.depth"):
        base(valueSubject=recursive_subject).load()
