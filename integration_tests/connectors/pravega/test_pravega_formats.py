"""``valueFormat`` on Pravega events: Avro and JSON Schema in the Confluent wire format, one registry.

Events are written by the official client with payloads encoded by confluent-kafka's own
``AvroSerializer`` / ``JSONSerializer`` (subjects ``<stream>-value``), and read through
``format("pravega")`` with the schema registry fixture (Apicurio 2.6.13).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pravega_helpers import new_stream, read_options, spark, write_events

from sparkflow_testing.pravega.cluster import PravegaCluster
from sparkflow_testing.registry.apicurio import SchemaRegistryServer

pytestmark = [pytest.mark.integration, pytest.mark.spark, pytest.mark.timeout(300)]
__all__ = ["spark"]

READING = {
    "type": "record",
    "name": "Reading",
    "namespace": "iot",
    "fields": [
        {"name": "sensor", "type": "string"},
        {"name": "value", "type": "double"},
        {"name": "unit", "type": ["null", {"type": "enum", "name": "Unit", "symbols": ["C", "F"]}]},
    ],
}
READING_JSON = {
    "type": "object",
    "properties": {
        "sensor": {"type": "string"},
        "value": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}


def _ctx(stream: str) -> Any:
    from confluent_kafka.serialization import MessageField, SerializationContext

    return SerializationContext(stream, MessageField.VALUE)


def test_avro_and_json_confluent_events(
    pravega_cluster: PravegaCluster, spark: Any, schema_registry: SchemaRegistryServer
) -> None:
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.schema_registry.json_schema import JSONSerializer

    scope, stream = new_stream(pravega_cluster, segments=2)
    ser = AvroSerializer(schema_registry.client(), json.dumps(READING))
    want = [{"sensor": f"s{i % 3}", "value": i / 4, "unit": None if i % 2 else "C"} for i in range(30)]
    events = [(r["sensor"], ser(r, _ctx(stream))) for r in want]
    write_events(pravega_cluster, scope, stream, [*events, ("s0", b"garbage")])
    base = spark.read.format("pravega").options(**read_options(pravega_cluster, scope, stream))
    base = base.option("valueFormat", "avro-confluent").option("schemaRegistry.url", schema_registry.url)
    with pytest.raises(
        Exception,
        match=rf"stream {scope}/{stream}, segment \d+, offset \d+: "
        "the value is not in the Confluent wire format",
    ):
        base.load().collect()
    df = base.option("parseMode", "DROPMALFORMED").load()
    assert df.columns == ["sensor", "value", "unit", "scope", "stream", "segment_id", "offset"]
    got = sorted((r["sensor"], r["value"], r["unit"]) for r in df.collect())
    assert got == sorted((r["sensor"], r["value"], r["unit"]) for r in want)

    scope, stream = new_stream(pravega_cluster, segments=1, scope=scope)
    jser = JSONSerializer(json.dumps(READING_JSON), schema_registry.client())
    rows = [{"sensor": "a", "value": 1.5, "tags": ["x"]}, {"sensor": "b", "value": 2.0, "tags": []}]
    write_events(pravega_cluster, scope, stream, [(None, jser(r, _ctx(stream))) for r in rows])
    js = (
        spark.read.format("pravega").options(**read_options(pravega_cluster, scope, stream))
        .options(valueFormat="json-confluent", valueLayout="struct")
        .option("schemaRegistry.url", schema_registry.url)
        .load()
    )  # fmt: skip
    assert js.columns[0] == "event"
    assert sorted((r["event"].asDict() for r in js.collect()), key=lambda e: e["sensor"]) == rows
