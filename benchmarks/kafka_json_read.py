"""Benchmark: JSON values in the Confluent wire format, kafka-unified against Spark's best OSS path.

The sibling of ``kafka_avro_read`` and ``kafka_protobuf_read`` with the same record shape as a JSON
Schema (15 properties: nested object, nullable properties, an ``enum`` string, an array, a map as
``additionalProperties``, two ``date-time`` strings, the decimal as a number), registered in a real
registry (Apicurio 2.6.13), produced once to real Apache Kafka with the Confluent header. Then, in one
``local[2]`` Spark session with Spark's own Kafka source, every decoded field is materialized by
``where hash(<every field>) is not null`` (the map as its entries) then ``count`` (a plain ``count``
would let Spark prune ``from_json`` down to the fields it needs):

- ``kafka-unified``: ``valueFormat=json-confluent``, each record validated against its writer schema
  (``valueValidate=true``, the default, as confluent-kafka's deserializer does);
- ``kafka-unified-unvalidated``: the same with ``valueValidate=false``;
- ``spark-from-json``: ``format("kafka")`` then ``from_json(cast(substring(value, 6) as string),
  <the schema as DDL, pasted>)``: what users do, with no validation and no registry;
- ``python-floor``: Spark's share (``spark_floor``): 20k rows of kafka-unified's own output handed
  over again and again by a Python data source doing no I/O, the same query.

Best of ``--rounds`` interleaved rounds after ``--warmup``; ratios against spark-from-json (>1 means
we are faster). Before that, decoding alone, outside Spark (``RecordDecoder.decode``, one thread, CPU
time), validated and not, on the path in use (the compiled ``JsonBatchDecoder`` where the module is
installed) and, for the same-run ratio, on the Python path (``SPARKFLOW_JSON_DECODER=python``, a 60k
slice). ``SPARKFLOW_JSON_DECODER=python`` on the command line runs everything on the Python path.

    python -m benchmarks.kafka_json_read --records 200000
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import struct
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.kafka_avro_read import (  # noqa: E402
    DECODE_ROUNDS,
    best_of,
    decode_alone,
    decode_rounds,
    loadavg,
    parse_args,
    produce,
    record,
    registry_bench,
)

_NULLABLE_STRING = {"type": ["string", "null"]}
SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "customer_id": {"type": "integer"},
        "customer_name": _NULLABLE_STRING,
        "email": _NULLABLE_STRING,
        "status": {"type": "string", "enum": ["NEW", "PAID", "SHIPPED", "DONE"]},
        "amount": {"type": "number"},
        "currency": {"type": "string", "maxLength": 3},
        "quantity": {"type": "integer", "minimum": 1},
        "discount": {"type": ["number", "null"]},
        "placed_at": {"type": "string", "format": "date-time"},
        "shipped_at": {"type": ["string", "null"], "format": "date-time"},
        "is_gift": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "attributes": {"type": "object", "additionalProperties": {"type": "string"}},
        "address": {
            "type": "object",
            "properties": {
                "street": {"type": "string"},
                "city": {"type": "string"},
                "zip": _NULLABLE_STRING,
                "country": {"type": "string"},
            },
            "required": ["street", "city", "country"],
        },
    },
    "required": ["id", "customer_id", "status", "amount", "currency", "quantity", "placed_at", "is_gift"],
}
DDL = (
    "id BIGINT, customer_id BIGINT, customer_name STRING, email STRING, status STRING, amount DOUBLE, "
    "currency STRING, quantity BIGINT, discount DOUBLE, placed_at STRING, shipped_at STRING, "
    "is_gift BOOLEAN, tags ARRAY<STRING>, attributes MAP<STRING, STRING>, "
    "address STRUCT<street: STRING, city: STRING, zip: STRING, country: STRING>"
)
"""The same record type as Spark DDL, pasted as a ``from_json`` user would (kafka-unified's mapping
of ``SCHEMA``: integers bigint, numbers double, date-time strings string)."""


def _plain(value: Any) -> Any:
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def encode(schema_id: int, n: int) -> list[bytes]:
    """``n`` records in the Confluent wire format (header, then compact JSON text)."""
    header = struct.pack(">bI", 0, schema_id)
    return [header + json.dumps(_plain(record(i)), separators=(",", ":")).encode() for i in range(n)]


def main() -> None:
    """Run the benchmark."""
    args = parse_args(__doc__)

    from pyspark.sql import functions as F  # noqa: N812

    from connector_base.spark import local_spark_session
    from sparkflow_testing.spark.kafka_source import NEWEST_SERVED, spark_kafka_jars

    with registry_bench(args.partitions, json.dumps(SCHEMA), "JSON") as bench:
        registry, broker, topic, schema_id = bench.registry, bench.broker, bench.topic, bench.schema_id
        t0 = time.perf_counter()
        values = encode(schema_id, args.records)
        produce(broker.bootstrap, topic, values, since=t0)
        sample = values[:100_000]
        from connectors.formats.json_decoder import native_json_decoder

        native = native_json_decoder() is not None
        for label, validate in (("validated", "true"), ("unvalidated", "false")):
            options = {"valueValidate": validate}
            rate, median = decode_rounds(
                sample, registry.url, topic, value_format="json-confluent", options=options
            )
            print(
                f"decoding alone (RecordDecoder, json-confluent, {label}, {'native' if native else 'Python'} "
                f"path, CPU time): {rate / 1e6:.3f} M records/s per core, best of {DECODE_ROUNDS} "
                f"(median {median / 1e6:.3f}) [load {loadavg()}]"
            )
            if native:  # the Python path on a slice, for the same-run ratio
                os.environ["SPARKFLOW_JSON_DECODER"] = "python"
                try:
                    slow = decode_alone(sample[:60_000], registry.url, topic, value_format="json-confluent",
                                        options=options)  # fmt: skip
                finally:
                    del os.environ["SPARKFLOW_JSON_DECODER"]
                print(
                    f"decoding alone, {label}, Python path, 60k records: {slow / 1e6:.3f} M records/s per "
                    f"core; native/Python = {rate / slow:.1f}x [load {loadavg()}]"
                )
        del values, sample

        jars = ",".join(str(p) for p in spark_kafka_jars(NEWEST_SERVED))
        spark = bench.spark = local_spark_session("bench-json", cores=2, spark__jars=jars)
        spark.sparkContext.setLogLevel("ERROR")
        # every field, the map as its entries (Spark refuses to hash a map)
        fields = [F.map_entries(f) if f == "attributes" else F.col(f) for f in SCHEMA["properties"]]

        def ours_df(validate: str) -> Any:
            return (
                spark.read.format("kafka-unified")
                .option("kafka.bootstrap.servers", broker.bootstrap)
                .option("subscribe", topic)
                .option("valueFormat", "json-confluent")
                .option("valueValidate", validate)
                .option("schemaRegistry.url", registry.url)
                .load()
            )

        def ours(validate: str) -> Any:
            def read() -> int:
                return int(ours_df(validate).where(F.hash(*fields).isNotNull()).count())

            return read

        from benchmarks.spark_floor import floor_frame

        sample_df = ours_df("false")
        floor_df = floor_frame(
            spark,
            sample_df.schema,
            args.records,
            sample_df.limit(20_000).toArrow(),
            partitions=args.partitions,
        )

        def floor() -> int:
            return int(floor_df.where(F.hash(*fields).isNotNull()).count())

        def theirs() -> int:
            df = (
                spark.read.format("kafka")
                .option("kafka.bootstrap.servers", broker.bootstrap)
                .option("subscribe", topic)
                .load()
                .select(F.from_json(F.expr("cast(substring(value, 6) as string)"), DDL).alias("v"))
                .select("v.*")
            )
            return int(df.where(F.hash(*fields).isNotNull()).count())

        readers = {
            "kafka-unified": ours("true"),
            "kafka-unified-unvalidated": ours("false"),
            "spark-from-json": theirs,
            "python-floor": floor,
        }
        best = best_of(readers, args.warmup, args.rounds, args.records)
        for name in ("kafka-unified", "kafka-unified-unvalidated"):
            print(
                f"best: {name} {best[name]:.2f}s, spark-from-json {best['spark-from-json']:.2f}s; "
                f"ratio {name}/spark-from-json = {best['spark-from-json'] / best[name]:.2f}x (goal >= 1.0x); "
                f"{name}/python-floor = {best['python-floor'] / best[name]:.2f}"
            )
        floor_s, theirs_s = best["python-floor"], best["spark-from-json"]
        print(
            f"python-floor {floor_s:.2f}s (the same rows handed to Spark by a Python data source doing no "
            f"I/O); python-floor/spark-from-json = {theirs_s / floor_s:.2f}x"
        )


if __name__ == "__main__":
    main()
