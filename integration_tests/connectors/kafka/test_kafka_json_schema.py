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


def test_plain_json_with_inline_schema_and_type_mismatch(spark: Any, reference_broker: KafkaBroker) -> None:
    topic = reference_broker.create_topic(1)
    reference_broker.produce(
        topic, [json.dumps(_order(0)).encode(), b'{"id": "not a number"}', json.dumps(_order(2)).encode()]
    )
    base = reader(spark, reference_broker, subscribe=topic, valueFormat="json", valueSchema=json.dumps(ORDER))
    with pytest.raises(
        Exception, match=rf"topic '{topic}', partition 0, offset 1: value does not fit the JSON Schema"
    ):
        base.load().collect()
    rows = sorted(base.option("mode", "PERMISSIVE").load().collect(), key=lambda r: r["offset"])
    assert [r["id"] for r in rows] == [0, None, 2] and rows[1]["_corrupt_record"] is not None
