"""``valueFormat`` / ``keyFormat`` = ``avro-confluent`` / ``avro`` on real Kafka with a real registry.

Records are written by confluent-kafka's own ``AvroSerializer`` (the interoperability oracle) to
the most faithful broker, and read back through ``kafka-unified`` with the schema registry fixture
(Apicurio 2.6.13). Registry and broker are shared by the session.
"""

from __future__ import annotations

import datetime
import decimal
import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from connector_base.testing.driver_process import DriverProcess, log_entries
from integration_tests.connectors.kafka.helpers import consume_all, memory_query, reader, stream
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.registry.apicurio import SchemaRegistryServer

pytestmark = [pytest.mark.spark, pytest.mark.integration, pytest.mark.timeout(300)]

ORDER_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": ["null", "string"], "default": None},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
        {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]}},
        {"name": "items", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {
            "name": "address",
            "type": {
                "type": "record",
                "name": "Address",
                "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "int"]}],
            },
        },
    ],
}
ORDER_V2 = {
    **ORDER_V1,
    "fields": [*ORDER_V1["fields"], {"name": "channel", "type": "string", "default": "web"}],
}
ORDER_V3 = {  # other columns than v1: "customer" gone, "channel" new
    **ORDER_V1,
    "fields": [
        *(f for f in ORDER_V1["fields"] if f["name"] != "customer"),
        {"name": "channel", "type": "string", "default": "web"},
    ],
}
KILL_DRIVER = Path(__file__).resolve().parents[2] / "connector_base" / "kill_driver.py"
KEY_SCHEMA = {
    "type": "record",
    "name": "OrderKey",
    "namespace": "shop",
    "fields": [{"name": "region", "type": "string"}],
}


def _order(i: int, v2: bool = False) -> dict[str, Any]:
    rec = {
        "id": i,
        "customer": None if i % 3 == 0 else f"c{i}",
        "amount": decimal.Decimal(f"{i}.{i % 100:02d}"),
        "placed": datetime.datetime(2024, 5, 1, tzinfo=datetime.UTC) + datetime.timedelta(seconds=i),
        "status": ["NEW", "PAID", "SHIPPED"][i % 3],
        "items": [f"sku{j}" for j in range(i % 3)],
        "attrs": {"n": i},
        "address": {"city": f"city{i % 5}", "zip": None if i % 2 else 1000 + i},
    }
    if v2:
        rec["channel"] = "app"
    return rec


def _serialize(
    registry: SchemaRegistryServer,
    topic: str,
    schema: dict[str, Any],
    records: list[Any],
    field: str = "value",
    **conf: Any,
) -> list[bytes]:
    """Records encoded by confluent-kafka's own AvroSerializer (registering the schema)."""
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    ser = AvroSerializer(registry.client(), json.dumps(schema), conf=conf or None)
    ctx = SerializationContext(topic, MessageField.VALUE if field == "value" else MessageField.KEY)
    return [ser(r, ctx) for r in records]


def _avro(spark: Any, broker: KafkaBroker, registry: SchemaRegistryServer, topic: str, **options: str) -> Any:
    return reader(spark, broker, subscribe=topic, **{"schemaRegistry.url": registry.url, **options}).load()


def test_values_written_by_confluent_serializer_become_typed_columns(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    topic = reference_broker.create_topic(2)
    reference_broker.produce(
        topic, _serialize(schema_registry, topic, ORDER_V1, [_order(i) for i in range(60)])
    )
    df = _avro(spark, reference_broker, schema_registry, topic, valueFormat="avro-confluent")
    assert df.schema.simpleString() == (
        "struct<key:binary,id:bigint,customer:string,amount:decimal(9,2),placed:timestamp,status:string,"
        "items:array<string>,attrs:map<string,bigint>,address:struct<city:string,zip:int>,topic:string,"
        "partition:int,offset:bigint,timestamp:timestamp,timestampType:int>"
    )
    rows = sorted(df.collect(), key=lambda r: r["id"])
    assert [r["id"] for r in rows] == list(range(60))
    for r in rows:
        want = _order(r["id"])
        assert r["customer"] == want["customer"] and r["amount"] == want["amount"]
        assert r["status"] == want["status"] and r["items"] == want["items"] and r["attrs"] == want["attrs"]
        assert r["address"].asDict() == want["address"]
        assert r["placed"].replace(tzinfo=None) == (
            want["placed"] - datetime.timedelta(0)
        ).astimezone().replace(tzinfo=None)
        assert r["topic"] == topic and r["partition"] in (0, 1)


def test_struct_layout_key_fields_prefixed_and_tombstones(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    topic = reference_broker.create_topic(1)
    keys = _serialize(
        schema_registry, topic, KEY_SCHEMA, [{"region": f"r{i % 2}"} for i in range(10)], field="key"
    )
    values: list[Any] = _serialize(schema_registry, topic, ORDER_V1, [_order(i) for i in range(10)])
    values[3] = None  # a tombstone: a null value, not a malformed one
    reference_broker.produce(topic, values, keys=keys)
    cols = _avro(
        spark,
        reference_broker,
        schema_registry,
        topic,
        keyFormat="avro-confluent",
        valueFormat="avro-confluent",
    )
    assert cols.columns[:3] == ["key_region", "id", "customer"]
    rows = sorted(cols.collect(), key=lambda r: r["offset"])
    assert [r["key_region"] for r in rows] == [f"r{i % 2}" for i in range(10)]
    assert rows[3]["id"] is None and rows[4]["id"] == 4
    nested = _avro(
        spark, reference_broker, schema_registry, topic,
        keyFormat="avro-confluent", valueFormat="avro-confluent", valueLayout="struct", keyLayout="struct",
    )  # fmt: skip
    assert nested.columns == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
    rows = sorted(nested.collect(), key=lambda r: r["offset"])
    assert rows[3]["value"] is None and rows[5]["value"]["id"] == 5 and rows[5]["key"]["region"] == "r1"


def test_evolution_latest_by_version_and_by_id(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    topic = reference_broker.create_topic(1)
    reference_broker.produce(
        topic, _serialize(schema_registry, topic, ORDER_V1, [_order(i) for i in range(5)])
    )
    v1_id = schema_registry.client().get_latest_version(f"{topic}-value").schema_id
    reference_broker.produce(
        topic, _serialize(schema_registry, topic, ORDER_V2, [_order(i, True) for i in range(5, 10)])
    )
    latest = _avro(spark, reference_broker, schema_registry, topic, valueFormat="avro-confluent")
    rows = sorted(latest.collect(), key=lambda r: r["id"])
    # v1 records resolved to the v2 reader schema take the added field's default
    assert [r["channel"] for r in rows] == ["web"] * 5 + ["app"] * 5
    for opts in ({"valueSchemaVersion": "1"}, {"valueSchemaId": str(v1_id)}):
        old = _avro(spark, reference_broker, schema_registry, topic, valueFormat="avro-confluent", **opts)
        assert "channel" not in old.columns
        assert sorted(r["id"] for r in old.collect()) == list(range(10))


def test_subject_strategies_and_explicit_subject(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    from confluent_kafka.schema_registry import (
        record_subject_name_strategy,
        topic_record_subject_name_strategy,
    )

    topic = reference_broker.create_topic(1)
    recs = [_order(i) for i in range(4)]
    payloads = _serialize(
        schema_registry, topic, ORDER_V1, recs, **{"subject.name.strategy": record_subject_name_strategy}
    )
    payloads += _serialize(
        schema_registry, topic, ORDER_V2, [_order(i, True) for i in range(4, 8)],
        **{"subject.name.strategy": topic_record_subject_name_strategy},
    )  # fmt: skip
    reference_broker.produce(topic, payloads)
    by_record = _avro(
        spark, reference_broker, schema_registry, topic,
        valueFormat="avro-confluent", subjectNameStrategy="record", valueRecordName="shop.Order",
    )  # fmt: skip
    assert "channel" not in by_record.columns and by_record.count() == 8
    by_topic_record = _avro(
        spark, reference_broker, schema_registry, topic,
        valueFormat="avro-confluent", subjectNameStrategy="topic-record", valueRecordName="shop.Order",
    )  # fmt: skip
    assert sorted(r["channel"] for r in by_topic_record.collect()) == ["app"] * 4 + ["web"] * 4
    explicit = _avro(
        spark,
        reference_broker,
        schema_registry,
        topic,
        valueFormat="avro-confluent",
        valueSubject=f"{topic}-shop.Order",
    )
    assert "channel" in explicit.columns
    with pytest.raises(Exception, match="valueRecordName"):
        _avro(
            spark,
            reference_broker,
            schema_registry,
            topic,
            valueFormat="avro-confluent",
            subjectNameStrategy="record",
        )


def test_plain_avro_with_inline_schema(spark: Any, reference_broker: KafkaBroker) -> None:
    import io

    import fastavro

    topic = reference_broker.create_topic(1)
    parsed = fastavro.parse_schema(ORDER_V1)
    bodies = []
    for i in range(6):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, _order(i))
        bodies.append(buf.getvalue())
    reference_broker.produce(topic, bodies)
    df = reader(
        spark, reference_broker, subscribe=topic, valueFormat="avro", valueSchema=json.dumps(ORDER_V1)
    ).load()
    assert sorted(r["id"] for r in df.collect()) == list(range(6))


def _bad_topic(broker: KafkaBroker, registry: SchemaRegistryServer) -> str:
    topic = broker.create_topic(1)
    good = _serialize(registry, topic, ORDER_V1, [_order(i) for i in range(4)])
    unknown_id = b"\x00" + (987654).to_bytes(4, "big") + good[0][5:]
    broker.produce(topic, [good[0], b"not avro at all", good[1], unknown_id, good[2][:8], good[3]])
    return topic


def test_parse_modes(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    topic = _bad_topic(reference_broker, schema_registry)
    failfast = _avro(spark, reference_broker, schema_registry, topic, valueFormat="avro-confluent")
    with pytest.raises(
        Exception,
        match=rf"topic '{topic}', partition 0, offset 1: the value is not in the Confluent wire format",
    ):
        failfast.collect()
    permissive = _avro(
        spark, reference_broker, schema_registry, topic, valueFormat="avro-confluent", mode="PERMISSIVE"
    )
    rows = sorted(permissive.collect(), key=lambda r: r["offset"])
    assert [r["id"] for r in rows] == [0, None, 1, None, None, 3]
    assert [r["_corrupt_record"] is None for r in rows] == [True, False, True, False, False, True]
    assert "unknown value schema id 987654" in rows[3]["_corrupt_record"]
    assert "offset 4: malformed Avro value (schema id" in rows[4]["_corrupt_record"]
    dropped = _avro(
        spark, reference_broker, schema_registry, topic, valueFormat="avro-confluent", mode="DROPMALFORMED"
    )
    assert sorted(r["id"] for r in dropped.collect()) == [0, 1, 3]


def test_unknown_schema_id_fails_naming_the_record(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    topic = reference_broker.create_topic(1)
    good = _serialize(schema_registry, topic, ORDER_V1, [_order(0)])
    reference_broker.produce(topic, [good[0], b"\x00" + (424242).to_bytes(4, "big") + good[0][5:]])
    df = _avro(spark, reference_broker, schema_registry, topic, valueFormat="avro-confluent")
    with pytest.raises(Exception, match=r"offset 1: unknown value schema id 424242"):
        df.collect()


def test_unresolvable_reader_schema_names_the_record(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    topic = reference_broker.create_topic(1)
    reference_broker.produce(topic, _serialize(schema_registry, topic, ORDER_V1, [_order(0)]))
    reader_schema = {
        "type": "record",
        "name": "Order",
        "namespace": "shop",
        "fields": [{"name": "required_new", "type": "int"}],
    }
    schema_registry.set_compatibility(f"{topic}-value", "NONE")
    schema_registry.register(f"{topic}-value", json.dumps(reader_schema))
    df = _avro(spark, reference_broker, schema_registry, topic, valueFormat="avro-confluent")
    with pytest.raises(
        Exception, match=r"offset 0: value schema id \d+ cannot be read with the reader schema"
    ):
        df.collect()


def test_bad_options_fail_at_load(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    topic = reference_broker.create_topic(1)
    cases = [
        ({"valueFormat": "avro-confluent"}, "schemaRegistry.url"),
        ({"valueFormat": "avro-confluent", "schemaRegistry.url": "ftp://x"}, "schemaRegistry.url"),
        ({"valueFormat": "avro"}, "valueSchema"),
        ({"valueFormat": "parquet"}, "valueFormat"),
        (
            {"valueFormat": "avro-confluent", "schemaRegistry.url": schema_registry.url, "mode": "lenient"},
            "mode",
        ),
        (
            {
                "valueFormat": "avro-confluent",
                "schemaRegistry.url": schema_registry.url,
                "schemaRegistry.colour": "x",
            },
            "schemaRegistry.colour",
        ),
        ({"valueFormat": "avro-confluent", "schemaRegistry.url": schema_registry.url}, "has no subject"),
    ]
    for options, expected in cases:
        with pytest.raises(Exception, match=expected):
            reader(spark, reference_broker, subscribe=topic, **options).load()


def test_registry_down_bounded_retries_no_credentials(spark: Any, reference_broker: KafkaBroker) -> None:
    from sparkflow_testing.processes import free_port

    topic = reference_broker.create_topic(1)
    secret = f"s3cret-{uuid.uuid4().hex}"
    url = f"http://127.0.0.1:{free_port()}"
    df = reader(
        spark, reference_broker, subscribe=topic, valueFormat="avro-confluent",
        **{"schemaRegistry.url": url, "schemaRegistry.basic.auth.user.info": f"alice:{secret}",
           "schemaRegistry.max.retries": "2", "schemaRegistry.retries.wait.ms": "10"},
    )  # fmt: skip
    # match=: any other failure (Spark's worker start limit on a loaded machine) surfaces whole
    with pytest.raises(
        Exception, match=re.escape(f"the schema registry at {url} is unreachable after 2 retries")
    ) as info:
        df.load()
    assert secret not in str(info.value)


def test_tls_client_certificate_and_credentials(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    sec = schema_registry.security
    assert sec is not None and schema_registry.secure_url is not None
    topic = reference_broker.create_topic(1)
    reference_broker.produce(
        topic, _serialize(schema_registry, topic, ORDER_V1, [_order(i) for i in range(3)])
    )
    tls = {
        "schemaRegistry.url": schema_registry.secure_url,
        "schemaRegistry.ssl.ca.location": str(sec.ca_pem),
        "schemaRegistry.ssl.certificate.location": str(sec.client_cert),
        "schemaRegistry.ssl.key.location": str(sec.client_key),
        "schemaRegistry.max.retries": "1",
    }
    basic = {"schemaRegistry.basic.auth.user.info": f"{sec.user}:{sec.password}"}
    bearer = {"schemaRegistry.bearer.auth.token": sec.token}
    for creds in (basic, bearer):
        df = reader(
            spark, reference_broker, subscribe=topic, valueFormat="avro-confluent", **tls, **creds
        ).load()
        assert sorted(r["id"] for r in df.collect()) == [0, 1, 2]
    refused = [
        (
            {**tls, "schemaRegistry.basic.auth.user.info": f"{sec.user}:wrong-{sec.password}"},
            "refused the credentials",
        ),
        ({**tls}, "refused the credentials"),
        (
            {**tls, **basic, "schemaRegistry.ssl.ca.location": str(sec.untrusted_ca_pem)},
            "CERTIFICATE_VERIFY_FAILED",
        ),
        (
            {**{k: v for k, v in tls.items() if "certificate" not in k and "key" not in k}, **basic},
            "unreachable",
        ),
    ]
    for options, expected in refused:
        with pytest.raises(Exception, match=expected) as info:
            reader(spark, reference_broker, subscribe=topic, valueFormat="avro-confluent", **options).load()
        assert not any(s in str(info.value) for s in sec.secrets)


def test_streaming_keeps_the_reader_schema_fixed_at_start(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer, tmp_path: Any
) -> None:
    topic = reference_broker.create_topic(1)
    reference_broker.produce(
        topic, _serialize(schema_registry, topic, ORDER_V1, [_order(i) for i in range(5)])
    )
    df = stream(
        spark, reference_broker, subscribe=topic, startingOffsets="earliest", valueFormat="avro-confluent",
        **{"schemaRegistry.url": schema_registry.url},
    ).load()  # fmt: skip
    query, table = memory_query(df.select("id", "status"), tmp_path)
    try:
        query.processAllAvailable()
        # a new version mid-query: its records are resolved to the reader schema fixed at start
        reference_broker.produce(
            topic, _serialize(schema_registry, topic, ORDER_V2, [_order(i, True) for i in range(5, 9)])
        )
        query.processAllAvailable()
        assert sorted(r["id"] for r in spark.table(table).collect()) == list(range(9))
    finally:
        query.stop()


def _deserialize(
    broker: KafkaBroker, registry: SchemaRegistryServer, topic: str, field: str = "value"
) -> list[Any]:
    """The topic's records decoded by confluent-kafka's own AvroDeserializer, in offset order."""
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    de = AvroDeserializer(registry.client())
    ctx = SerializationContext(topic, MessageField.VALUE if field == "value" else MessageField.KEY)
    return [None if raw is None else de(raw, ctx) for raw in consume_all(broker, topic, field)]


def test_sink_output_is_read_by_confluent_deserializer(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    src, dst = reference_broker.create_topic(1), reference_broker.create_topic(1)
    want = [_order(i) for i in range(20)]
    reference_broker.produce(src, _serialize(schema_registry, src, ORDER_V1, want))
    df = _avro(
        spark, reference_broker, schema_registry, src, valueFormat="avro-confluent", valueLayout="struct"
    )
    (
        df.selectExpr("named_struct('region', concat('r', cast(value.id % 2 as string))) as key", "value")
        .write.format("kafka-unified")
        .option("kafka.bootstrap.servers", reference_broker.bootstrap)
        .options(
            topic=dst, valueFormat="avro-confluent", keyFormat="avro-confluent", autoRegisterSchemas="true"
        )
        .options(valueSchema=json.dumps(ORDER_V1), keySchema=json.dumps(KEY_SCHEMA))
        .option("schemaRegistry.url", schema_registry.url)
        .mode("append")
        .save()
    )
    got = sorted(_deserialize(reference_broker, schema_registry, dst), key=lambda r: r["id"])
    assert got == want
    keys = _deserialize(reference_broker, schema_registry, dst, field="key")
    assert sorted(k["region"] for k in keys) == ["r0"] * 10 + ["r1"] * 10
    assert schema_registry.client().get_latest_version(f"{dst}-value").schema.schema_str is not None


def test_sink_uses_the_subjects_latest_schema_and_refuses_unregistered(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer
) -> None:
    dst = reference_broker.create_topic(1)
    schema_registry.register(f"{dst}-value", json.dumps(KEY_SCHEMA))
    df = spark.createDataFrame([("north",), ("south",)], "region string").selectExpr(
        "struct(region) as value"
    )
    writer = (
        df.write.format("kafka-unified")
        .option("kafka.bootstrap.servers", reference_broker.bootstrap)
        .options(topic=dst, valueFormat="avro-confluent")
        .option("schemaRegistry.url", schema_registry.url)
        .mode("append")
    )
    writer.save()
    assert sorted(r["region"] for r in _deserialize(reference_broker, schema_registry, dst)) == [
        "north",
        "south",
    ]
    other = {"type": "record", "name": "Other", "fields": [{"name": "region", "type": "string"}]}
    with pytest.raises(
        Exception, match=rf"not registered under subject '{dst}-value'.*autoRegisterSchemas=true"
    ):
        writer.option("valueSchema", json.dumps(other)).save()


def test_schema_evolution_mode_fail_stops_the_query_and_a_restart_reads_new_fields(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer, tmp_path: Any
) -> None:
    topic = reference_broker.create_topic(1)
    reference_broker.produce(
        topic, _serialize(schema_registry, topic, ORDER_V1, [_order(i) for i in range(3)])
    )

    def start() -> tuple[Any, str]:
        df = stream(
            spark, reference_broker, subscribe=topic, startingOffsets="earliest",
            valueFormat="avro-confluent", schemaEvolutionMode="fail",
            **{"schemaRegistry.url": schema_registry.url},
        ).load()  # fmt: skip
        return memory_query(df.select("id", *[c for c in df.columns if c == "channel"]), tmp_path)

    query, _table = start()
    try:
        query.processAllAvailable()
        reference_broker.produce(topic, _serialize(schema_registry, topic, ORDER_V2, [_order(3, True)]))
        with pytest.raises(
            Exception, match=r"fields \['channel'\].*schemaEvolutionMode=fail: restart the query"
        ):
            query.processAllAvailable()
    finally:
        query.stop()
    query, table = start()  # a new load(): the latest version (v2) is the reader schema now
    try:
        query.processAllAvailable()
        rows = sorted(spark.table(table).collect(), key=lambda r: r["id"])
        assert [(r["id"], r["channel"]) for r in rows] == [(0, "web"), (1, "web"), (2, "web"), (3, "app")]
    finally:
        query.stop()


@pytest.mark.timeout(900)
def test_restart_from_the_checkpoint_decodes_with_the_checkpoints_reader_schema(
    spark: Any, reference_broker: KafkaBroker, schema_registry: SchemaRegistryServer, tmp_path: Path
) -> None:
    """Killed mid-stream, a new version with other columns registered, restarted on the checkpoint."""
    topic = reference_broker.create_topic(1)
    reference_broker.produce(
        topic, _serialize(schema_registry, topic, ORDER_V1, [_order(i) for i in range(20)])
    )
    v1_id = schema_registry.client().get_latest_version(f"{topic}-value").schema_id
    out, chk = tmp_path / "out", tmp_path / "chk"
    options = {
        "kafka.bootstrap.servers": reference_broker.bootstrap,
        "subscribe": topic,
        "startingOffsets": "earliest",
        "maxOffsetsPerTrigger": "4",
        "valueFormat": "avro-confluent",
        "schemaRegistry.url": schema_registry.url,
    }
    driver = DriverProcess(
        KILL_DRIVER, ["kafka-unified", str(chk), str(out), json.dumps(options), "--trigger-ms", "100"]
    )
    try:
        driver.wait_for(lambda: log_entries(chk / "commits") >= 2)
    finally:
        driver.kill()  # SIGKILL: driver, JVM and workers, mid-stream
    first_run = spark.read.parquet(str(out))
    columns, first_rows = first_run.columns, first_run.collect()
    assert "customer" in columns and "channel" not in columns and first_rows

    v3 = [{k: v for k, v in _order(i).items() if k != "customer"} | {"channel": "app"} for i in range(20, 26)]
    reference_broker.produce(topic, _serialize(schema_registry, topic, ORDER_V3, v3))
    v3_id = schema_registry.client().get_latest_version(f"{topic}-value").schema_id
    assert v3_id != v1_id

    # restarted as it was: its load() fixed the new latest version, which the checkpoint never used
    df = spark.readStream.format("kafka-unified").options(**options).load()
    assert "channel" in df.columns
    query = (
        df.writeStream.format("parquet").option("path", str(out)).option("checkpointLocation", str(chk))
        .trigger(availableNow=True).start()
    )  # fmt: skip
    with pytest.raises(
        Exception, match=rf"(?s)reader schema id {v1_id} .*fixed id {v3_id}.*valueSchemaId={v1_id}"
    ):
        query.awaitTermination(300)
    assert len(spark.read.parquet(str(out)).collect()) == len(first_rows)  # nothing read

    # restarted with the checkpoint's reader schema pinned: the replay and the rest decode as before
    pinned = DriverProcess(
        KILL_DRIVER,
        ["kafka-unified", str(chk), str(out), json.dumps({**options, "valueSchemaId": str(v1_id)})],
    )
    assert pinned.finish(600), "the pinned restart failed"
    after = spark.read.parquet(str(out))
    rows = sorted(after.collect(), key=lambda r: r["id"])
    assert after.columns == columns
    assert [r["id"] for r in rows] == list(range(26))  # nothing lost or read twice
    assert {r["id"]: r for r in rows} | {r["id"]: r for r in first_rows} == {r["id"]: r for r in rows}
    assert [r["customer"] for r in rows[20:]] == [None] * 6  # v3 records resolved to v1: its default
    assert [r["customer"] for r in rows[:20]] == [_order(i)["customer"] for i in range(20)]
