"""``valueFormat`` = ``json-confluent`` / ``json`` on real Kafka with a real registry.

Interoperability both ways: records written by confluent-kafka's ``JSONSerializer`` are read by
``kafka-unified``, and the sink's records are read by its ``JSONDeserializer``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from integration_tests.connectors.kafka.helpers import reader
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.registry.apicurio import SchemaRegistryServer

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(300)]

ORDER = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "customer": {"type": ["string", "null"]},
        "amount": {"type": "number"},
        "paid": {"type": "boolean"},
        "items": {"type": "array", "items": {"type": "string"}},
        "attrs": {"type": "object", "additionalProperties": {"type": "integer"}},
        "address": {"$ref": "#/definitions/Address"},
    },
    "required": ["id"],
    "definitions": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}},
}


def _order(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "customer": None if i % 2 else f"c{i}",
        "amount": i * 1.5,
        "paid": i % 3 == 0,
        "items": [f"s{j}" for j in range(i % 3)],
        "attrs": {"n": i},
        "address": {"city": f"city{i}"},
    }


def _serialize(registry: SchemaRegistryServer, topic: str, records: list[Any]) -> list[bytes]:
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    ser = JSONSerializer(json.dumps(ORDER), registry.client())
    return [ser(r, SerializationContext(topic, MessageField.VALUE)) for r in records]


def test_json_confluent_both_ways(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    src, dst = reference_broker.create_topic(1), reference_broker.create_topic(1)
    want = [_order(i) for i in range(12)]
    reference_broker.produce(src, [*_serialize(schema_registry, src, want), b"\x00\x00\x00\x00\x01{not json"])
    df = reader(
        spark, reference_broker, subscribe=src, valueFormat="json-confluent", mode="DROPMALFORMED",
        **{"schemaRegistry.url": schema_registry.url},
    ).load()  # fmt: skip
    assert df.schema.simpleString().startswith(
        "struct<key:binary,id:bigint,customer:string,amount:double,paid:boolean,items:array<string>,"
        "attrs:map<string,bigint>,address:struct<city:string>,topic:string"
    )
    rows = sorted(df.collect(), key=lambda r: r["id"])
    got = [
        {
            k: (v.asDict() if hasattr(v, "asDict") else v)
            for k, v in r.asDict().items()
            if k in ORDER["properties"]
        }
        for r in rows
    ]
    assert got == want
    (
        df.selectExpr("struct(id, customer, amount, paid, items, attrs, address) as value")
        .write.format("kafka-unified")
        .option("kafka.bootstrap.servers", reference_broker.bootstrap)
        .options(
            topic=dst, valueFormat="json-confluent", valueSchema=json.dumps(ORDER), autoRegisterSchemas="true"
        )
        .option("schemaRegistry.url", schema_registry.url)
        .mode("append")
        .save()
    )
    de = JSONDeserializer(json.dumps(ORDER), schema_registry_client=schema_registry.client())
    consumer = reference_broker.consumer()
    consumer.subscribe([dst])
    out: list[Any] = []
    try:
        for _ in range(30):
            out += [
                de(m.value(), SerializationContext(dst, MessageField.VALUE))
                for m in consumer.consume(100, 1.0)
                if not m.error()
            ]
            if len(out) >= len(want):
                break
    finally:
        consumer.close()
    assert sorted(out, key=lambda r: r["id"]) == want


def test_json_confluent_validates_against_the_writer_schema(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    """Records that confluent-kafka's validating JSONDeserializer refuses are malformed here too."""
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError

    src, dst = reference_broker.create_topic(1), reference_broker.create_topic(1)
    good = _serialize(schema_registry, src, [_order(0), _order(1)])
    header = good[0][:5]  # the writer schema's id, as the serializer wrote it
    bad = header + json.dumps({"customer": "no id"}).encode()  # 'id' is required by the writer schema
    reference_broker.produce(src, [good[0], bad, good[1]])
    de = JSONDeserializer(json.dumps(ORDER), schema_registry_client=schema_registry.client())
    with pytest.raises(SerializationError, match="required"):  # the oracle refuses it too
        de(bad, SerializationContext(src, MessageField.VALUE))
    base = reader(
        spark, reference_broker, subscribe=src, valueFormat="json-confluent",
        **{"schemaRegistry.url": schema_registry.url},
    )  # fmt: skip
    with pytest.raises(
        Exception,
        match=rf"topic '{src}', partition 0, offset 1: malformed JSON value \(schema id \d+\): "
        r"JsonSchemaValidationError: does not validate against its JSON Schema at \(the root\) "
        r"\(keyword 'required'\): 'id' is a required property",
    ):
        base.load().collect()
    rows = sorted(base.option("mode", "PERMISSIVE").load().collect(), key=lambda r: r["offset"])
    assert [r["id"] for r in rows] == [0, None, 1]
    assert rows[1]["customer"] is None and "'id' is a required property" in rows[1]["_corrupt_record"]
    kept = base.option("mode", "DROPMALFORMED").load().collect()
    assert sorted(r["id"] for r in kept) == [0, 1]
    unchecked = sorted(base.option("valueValidate", "false").load().collect(), key=lambda r: r["offset"])
    assert [(r["id"], r["customer"]) for r in unchecked] == [(0, "c0"), (None, "no id"), (1, None)]

    # the sink validates rows against the subject's schema before writing (amount must be a number)
    rows_df = spark.createDataFrame([(1, "ok"), (None, "missing id")], "id bigint, customer string")
    write = (
        rows_df.selectExpr("struct(id, customer) as value")
        .write.format("kafka-unified")
        .option("kafka.bootstrap.servers", reference_broker.bootstrap)
        .options(
            topic=dst, valueFormat="json-confluent", valueSchemaId=str(int.from_bytes(header[1:], "big"))
        )
        .option("schemaRegistry.url", schema_registry.url)
        .mode("append")
    )
    with pytest.raises(Exception, match=r"row \d+ of the batch: its value does not validate against its JSON "
                       r"Schema at /id \(keyword 'type'\).*valueValidate=false"):  # fmt: skip
        write.save()


def test_plain_json_with_inline_schema_and_type_mismatch(spark: Any, reference_broker: KafkaBroker) -> None:
    topic = reference_broker.create_topic(1)
    reference_broker.produce(
        topic, [json.dumps(_order(0)).encode(), b'{"id": "not a number"}', json.dumps(_order(2)).encode()]
    )
    base = reader(spark, reference_broker, subscribe=topic, valueFormat="json", valueSchema=json.dumps(ORDER))
    with pytest.raises(
        Exception,
        match=rf"topic '{topic}', partition 0, offset 1: malformed JSON value \(the inline schema\): "
        r"JsonSchemaValidationError: does not validate against its JSON Schema at /id \(keyword 'type'\)",
    ):
        base.load().collect()
    with pytest.raises(  # unvalidated, the same record still does not fit the column's type
        Exception, match=rf"topic '{topic}', partition 0, offset 1: value does not fit the JSON Schema"
    ):
        base.option("valueValidate", "false").load().collect()
    rows = sorted(base.option("mode", "PERMISSIVE").load().collect(), key=lambda r: r["offset"])
    assert [r["id"] for r in rows] == [0, None, 2] and rows[1]["_corrupt_record"] is not None
