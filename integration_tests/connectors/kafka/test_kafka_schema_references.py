"""Avro and JSON Schema registered with references to other subjects, on real Kafka and a real registry.

The oracle is confluent-kafka's own serializers and deserializers, which resolve references
themselves: records they write with a schema that references other subjects are read by
``kafka-unified`` into typed columns, and the sink's records (encoded with such a schema, the
subject's latest) are read back by their deserializers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from integration_tests.connectors.kafka.helpers import consume_all, reader
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.registry.apicurio import SchemaRegistryServer
from unit_tests.connectors.formats.test_schema_references import (
    ADDRESS,
    ADDRESS_JSON,
    GEO,
    GEO_JSON,
    ORDER,
    ORDER_JSON,
    order_record,
)

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(300)]

ORDER_FIELDS = [f["name"] for f in ORDER["fields"]]


def _by_id(record: dict[str, Any]) -> Any:
    return record["id"]


def _with_references(
    registry: SchemaRegistryServer, kind: str, schema: dict[str, Any], refs: list[tuple[str, dict[str, Any]]]
) -> Any:
    """``schema`` as a registry ``Schema`` whose references are registered under subjects of their own."""
    from confluent_kafka.schema_registry import Schema, SchemaReference

    client = registry.client()
    references = []
    for name, ref in refs:
        subject = f"ref-{kind.lower()}-{name}"
        client.register_schema(subject, Schema(json.dumps(ref), kind, references))
        version = client.get_latest_version(subject).version
        references.append(SchemaReference(name, subject, version))
    return Schema(json.dumps(schema), kind, references)


def _consume(broker: KafkaBroker, topic: str, decode: Any) -> list[Any]:
    return [decode(v) for v in consume_all(broker, topic)]


def _write(df: Any, broker: KafkaBroker, registry: SchemaRegistryServer, topic: str, fmt: str) -> None:
    (
        df.write.format("kafka-unified")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .options(topic=topic, valueFormat=fmt, **{"schemaRegistry.url": registry.url})
        .mode("append")
        .save()
    )


def test_avro_with_references_both_ways(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    src, dst = reference_broker.create_topic(2), reference_broker.create_topic(1)
    schema = _with_references(schema_registry, "AVRO", ORDER, [("geo.Geo", GEO), ("shop.Address", ADDRESS)])
    want = [order_record(i) for i in range(30)]
    ser = AvroSerializer(schema_registry.client(), schema)
    reference_broker.produce(src, [ser(r, SerializationContext(src, MessageField.VALUE)) for r in want])

    df = reader(
        spark, reference_broker, subscribe=src, valueFormat="avro-confluent",
        **{"schemaRegistry.url": schema_registry.url},
    ).load()  # fmt: skip
    assert df.schema["ship_to"].dataType.simpleString() == (
        "struct<city:string,where:struct<lat:double>,kind:string>"
    )
    rows = sorted(
        (r.asDict(recursive=True) for r in df.select(*ORDER_FIELDS).collect()), key=lambda r: r["id"]
    )
    assert rows == want

    # the sink encodes with the subject's latest schema, registered with its references
    schema_registry.client().register_schema(f"{dst}-value", schema)
    value = f"struct({', '.join(ORDER_FIELDS)}) as value"
    _write(df.selectExpr(value), reference_broker, schema_registry, dst, "avro-confluent")
    de = AvroDeserializer(schema_registry.client())
    got = _consume(reference_broker, dst, lambda v: de(v, SerializationContext(dst, MessageField.VALUE)))
    assert sorted(got, key=_by_id) == want


def test_json_schema_with_references_both_ways(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    src, dst = reference_broker.create_topic(1), reference_broker.create_topic(1)
    schema = _with_references(
        schema_registry, "JSON", ORDER_JSON, [("geo.json", GEO_JSON), ("address.json", ADDRESS_JSON)]
    )
    want = [
        {"id": i, "ship_to": {"city": f"c{i}", "zip": f"{10000 + i}", "geo": {"lat": i * 0.5}},
         "zip": f"{20000 + i}", "lines": [{"sku": f"s{j}"} for j in range(i % 3)]}
        for i in range(20)
    ]  # fmt: skip
    ser = JSONSerializer(schema, schema_registry.client())
    ctx = SerializationContext(src, MessageField.VALUE)
    payloads = [ser(r, ctx) for r in want]
    with pytest.raises(
        Exception, match="(?i)does not match|validation"
    ):  # the oracle validates through the refs
        ser({"id": 99, "ship_to": {"city": "x", "zip": "1"}}, ctx)
    reference_broker.produce(src, payloads)

    df = reader(
        spark, reference_broker, subscribe=src, valueFormat="json-confluent",
        **{"schemaRegistry.url": schema_registry.url},
    ).load()  # fmt: skip
    assert df.schema["ship_to"].dataType.simpleString() == (
        "struct<city:string,zip:string,geo:struct<lat:double>,note:string>"
    )
    rows = sorted(
        (r.asDict(recursive=True) for r in df.select("id", "ship_to", "zip", "lines").collect()),
        key=_by_id,
    )
    assert rows == [{**w, "ship_to": {**w["ship_to"], "note": None}} for w in want]

    schema_registry.client().register_schema(f"{dst}-value", schema)
    value = "struct(id, struct(ship_to.city, ship_to.zip, ship_to.geo) as ship_to, zip, lines)"
    _write(df.selectExpr(f"{value} as value"), reference_broker, schema_registry, dst, "json-confluent")
    de = JSONDeserializer(schema, schema_registry_client=schema_registry.client())
    got = _consume(reference_broker, dst, lambda v: de(v, SerializationContext(dst, MessageField.VALUE)))
    assert sorted(got, key=_by_id) == want
