"""``valueFormat`` on Pravega events: Avro, JSON Schema and Protobuf in the Confluent wire format.

Events are written by the project's writer with payloads encoded by confluent-kafka's own
``AvroSerializer`` / ``JSONSerializer`` / ``ProtobufSerializer`` (subjects ``<stream>-value``), and
read through ``format("pravega")`` with the schema registry fixture (Apicurio 2.6.13); and the sink
encodes the ``event`` struct with ``valueFormat`` in the same wire format, which confluent-kafka's
deserializers read back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pravega_helpers import new_stream, read_options, spark, write_events

from integration_tests.connectors.formats.protoc_modules import generated_module
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


READING_PROTO = """
syntax = "proto3";
package sparkflow.pravega;
message Reading {
  string sensor = 1;
  double value = 2;
  Unit unit = 3;
  repeated string tags = 4;
  enum Unit { C = 0; F = 1; }
}
"""


@pytest.fixture(scope="module")
def reading_pb2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The generated message module (protoc --python_out), as a producer application has it."""
    protos = {"sparkflow_pravega_reading.proto": READING_PROTO}
    with generated_module(tmp_path_factory.mktemp("reading_proto"), protos) as module:
        yield module


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


def _raw_events(cluster: PravegaCluster, scope: str, stream: str) -> list[bytes]:
    """Every event payload of the stream, segment by segment (the project's segment reads)."""
    from connectors.pravega.cluster_client import PravegaClusterClient
    from connectors.pravega.event_decoding import EVENT_HEADER_BYTES, event_boundaries

    client = PravegaClusterClient(cluster.settings())
    try:
        out = []
        for seg in client.current_segments(scope, stream):
            info = client.info(scope, stream, seg.segment_id)
            data = client.read_bytes(scope, stream, seg.segment_id, info.head, info.tail)
            bounds = event_boundaries(data, info.head)
            out += [
                data[a - info.head + EVENT_HEADER_BYTES : b - info.head]
                for a, b in zip(bounds, bounds[1:], strict=False)
            ]
        return out
    finally:
        client.close()


@pytest.mark.parametrize("exactly_once", ["false", "true"])
def test_the_sink_encodes_events_that_confluent_deserializers_read(
    pravega_cluster: PravegaCluster, spark: Any, schema_registry: SchemaRegistryServer, exactly_once: str
) -> None:
    """``valueFormat`` on the sink: the ``event`` struct is encoded in the Confluent wire format with the
    subject's schema (registered here with ``autoRegisterSchemas``); confluent-kafka's own
    deserializers read what was written, and so does ``format("pravega")``."""
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer
    from pyspark.sql import functions as F

    scope, stream = new_stream(pravega_cluster, segments=2)
    rows = [(f"s{i % 3}", i / 4, None if i % 2 else "C") for i in range(40)]
    df = spark.createDataFrame(rows, "sensor string, value double, unit string")
    df = df.select(F.col("sensor").alias("routing_key"), F.struct("sensor", "value", "unit").alias("event"))
    sink = {
        "controller": pravega_cluster.controller_uri,
        "scope": scope,
        "stream": stream,
        "exactly_once": exactly_once,
        "schemaRegistry.url": schema_registry.url,
        "valueFormat": "avro-confluent",
        "valueSchema": json.dumps(READING),
        "autoRegisterSchemas": "true",
    }
    df.repartition(2).write.format("pravega").options(**sink).mode("append").save()
    avro = AvroDeserializer(schema_registry.client())
    got = sorted(tuple(avro(e, _ctx(stream)).values()) for e in _raw_events(pravega_cluster, scope, stream))
    assert got == sorted(rows)
    back = spark.read.format("pravega").options(**read_options(pravega_cluster, scope, stream))
    back = back.options(valueFormat="avro-confluent", **{"schemaRegistry.url": schema_registry.url}).load()
    assert sorted((r["sensor"], r["value"], r["unit"]) for r in back.collect()) == sorted(rows)

    scope, stream = new_stream(pravega_cluster, segments=1, scope=scope)
    js = spark.createDataFrame(
        [("a", 1.5, ["x"]), ("b", 2.0, [])], "sensor string, value double, tags array<string>"
    )
    js.select(F.struct("sensor", "value", "tags").alias("event")).write.format("pravega").options(
        **{**sink, "stream": stream, "valueFormat": "json-confluent", "valueSchema": json.dumps(READING_JSON)}
    ).mode("append").save()
    jdes = JSONDeserializer(json.dumps(READING_JSON), schema_registry_client=schema_registry.client())
    decoded = [jdes(e, _ctx(stream)) for e in _raw_events(pravega_cluster, scope, stream)]
    assert sorted(decoded, key=lambda e: e["sensor"]) == [
        {"sensor": "a", "value": 1.5, "tags": ["x"]},
        {"sensor": "b", "value": 2.0, "tags": []},
    ]


def test_a_sink_format_needs_a_struct_event(
    pravega_cluster: PravegaCluster, spark: Any, schema_registry: SchemaRegistryServer
) -> None:
    scope, stream = new_stream(pravega_cluster, segments=1)
    with pytest.raises(Exception, match="column 'event' must be a struct of the writer schema's fields"):
        spark.createDataFrame([("x",)], "event string").write.format("pravega").options(
            controller=pravega_cluster.controller_uri,
            scope=scope,
            stream=stream,
            valueFormat="avro-confluent",
            valueSchema=json.dumps(READING),
            autoRegisterSchemas="true",
            **{"schemaRegistry.url": schema_registry.url},
        ).mode("append").save()


def test_protobuf_confluent_events_read_and_written_back(
    pravega_cluster: PravegaCluster, spark: Any, schema_registry: SchemaRegistryServer, reading_pb2: Any
) -> None:
    """Events encoded by confluent-kafka's ``ProtobufSerializer`` read as typed columns (a bad event
    fails naming the stream, segment and offset, or is dropped); the sink writes them to another
    stream with the registered schema, in a transaction, and ``ProtobufDeserializer`` reads back the
    original messages."""
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
    from pyspark.sql import functions as F

    scope, stream = new_stream(pravega_cluster, segments=2)
    ser = ProtobufSerializer(reading_pb2.Reading, schema_registry.client(), {"use.deprecated.format": False})
    messages = [
        reading_pb2.Reading(
            sensor=f"s{i % 3}", value=i / 4 + 0.25, unit=i % 2, tags=[f"t{j}" for j in range(i % 3)]
        )
        for i in range(30)
    ]
    write_events(
        pravega_cluster,
        scope,
        stream,
        [*((m.sensor, ser(m, _ctx(stream))) for m in messages), ("s0", b"junk")],
    )

    def base() -> Any:
        return (
            spark.read.format("pravega").options(**read_options(pravega_cluster, scope, stream))
            .options(valueFormat="protobuf-confluent", **{"schemaRegistry.url": schema_registry.url})
        )  # fmt: skip

    with pytest.raises(
        Exception,
        match=rf"stream {scope}/{stream}, segment \d+, offset \d+: "
        "the value is not in the Confluent wire format",
    ):
        base().load().collect()
    df = base().option("parseMode", "DROPMALFORMED").load()
    assert df.columns[:4] == ["sensor", "value", "unit", "tags"]
    got = sorted((r["sensor"], r["value"], r["unit"], r["tags"]) for r in df.collect())
    # proto3: an enum at its zero value reads as null, as Spark's from_protobuf gives it
    want = sorted((m.sensor, m.value, "F" if m.unit else None, list(m.tags)) for m in messages)
    assert got == want

    _scope, out = new_stream(pravega_cluster, segments=1, scope=scope)
    (
        df.select(
            F.col("sensor").alias("routing_key"), F.struct("sensor", "value", "unit", "tags").alias("event")
        )
        .write.format("pravega")
        .options(controller=pravega_cluster.controller_uri, scope=scope, stream=out, exactly_once="true")
        .options(valueFormat="protobuf-confluent", valueSubject=f"{stream}-value")
        .option("schemaRegistry.url", schema_registry.url)
        .mode("append")
        .save()
    )
    de = ProtobufDeserializer(reading_pb2.Reading, {"use.deprecated.format": False}, schema_registry.client())
    back = [de(e, _ctx(out)) for e in _raw_events(pravega_cluster, scope, out)]
    assert sorted(back, key=_by_sensor_and_value) == sorted(messages, key=_by_sensor_and_value)


def _by_sensor_and_value(message: Any) -> tuple[str, float]:
    return message.sensor, message.value
