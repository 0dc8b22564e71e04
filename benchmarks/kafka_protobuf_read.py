"""Benchmark: Protobuf values in the Confluent wire format, kafka-unified against Spark's best OSS path.

The sibling of ``kafka_avro_read`` with the same record shape as a proto3 message (15 fields:
nested message, ``optional`` fields, enum, repeated, map, two ``Timestamp``s; the decimal becomes
int64 cents), its ``.proto`` text registered in a real registry (Apicurio 2.6.13), produced once to
real Apache Kafka. Then, in one ``local[2]`` Spark session with Spark's Kafka source and
spark-protobuf (Maven Central):

- ``kafka-unified``: ``valueFormat=protobuf-confluent``, ``where placed_at is not null``, ``count``;
- ``spark-from-protobuf``: ``format("kafka")`` then
  ``from_protobuf(substring(value, 7), "bench.Order", binaryDescriptorSet=...)`` (5 header bytes and
  the one message-index byte stripped, the descriptor set passed by hand), ``where v is not null``,
  ``count``.

Best of ``--rounds`` interleaved rounds after ``--warmup``; ratio kafka-unified / spark-from-protobuf
(>1 means we are faster). Before that, decoding alone, outside Spark (``RecordDecoder.decode``, one
thread, CPU time): the native decoder on every record, the Python (protobuf runtime) decoder on a
60k slice (``SPARKFLOW_PROTOBUF_DECODER=python``), and their ratio.

Both are also timed against ``spark-kafka-raw``: ``format("kafka")`` counting ``value is not
null`` without decoding, the floor any decoding reader sits above.

Where spark-protobuf cannot be resolved (the package mirror here serves no version of it), a build
of it from Apache Spark's source can be named in ``SPARKFLOW_SPARK_PROTOBUF_JARS``
(``tools/build_spark_protobuf.sh``); without either, only the floor is printed.

    python -m benchmarks.kafka_protobuf_read --records 200000
"""

from __future__ import annotations

import os
import struct
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.kafka_avro_read import (  # noqa: E402
    best_of,
    decode_native_and_pure,
    parse_args,
    produce,
    record,
    registry_bench,
)

PROTO = """
syntax = "proto3";
package bench;
import "google/protobuf/timestamp.proto";
message Order {
  int64 id = 1;
  int64 customer_id = 2;
  optional string customer_name = 3;
  optional string email = 4;
  Status status = 5;
  int64 amount_cents = 6;
  string currency = 7;
  int32 quantity = 8;
  optional double discount = 9;
  google.protobuf.Timestamp placed_at = 10;
  google.protobuf.Timestamp shipped_at = 11;
  bool is_gift = 12;
  repeated string tags = 13;
  map<string, string> attributes = 14;
  Address address = 15;
  enum Status { NEW = 0; PAID = 1; SHIPPED = 2; DONE = 3; }
  message Address { string street = 1; string city = 2; optional string zip = 3; string country = 4; }
}
"""


def encode(schema_id: int, n: int) -> tuple[list[bytes], bytes]:
    """``n`` records in the Confluent wire format, and the descriptor set Spark's from_protobuf takes."""
    from google.protobuf import descriptor_pb2, message_factory

    from connectors.formats.protobuf_schema import ProtoSchema

    schema = ProtoSchema.compile(PROTO)
    order = message_factory.GetMessageClass(schema.message("bench.Order"))
    header = struct.pack(">bI", 0, schema_id) + b"\x00"
    out = []
    for i in range(n):
        r: dict[str, Any] = dict(record(i))
        r["amount_cents"] = int(r.pop("amount") * 100)
        r["address"] = {k: v for k, v in r["address"].items() if v is not None}
        msg = order(**{k: v for k, v in r.items() if v is not None and k not in ("placed_at", "shipped_at")})
        msg.placed_at.FromDatetime(r["placed_at"])
        if r["shipped_at"] is not None:
            msg.shipped_at.FromDatetime(r["shipped_at"])
        out.append(header + msg.SerializeToString())
    files = descriptor_pb2.FileDescriptorSet()
    for f in (schema.pool.FindFileByName("google/protobuf/timestamp.proto"), schema.file):
        f.CopyToProto(files.file.add())
    return out, files.SerializeToString()


def main() -> None:
    """Run the benchmark."""
    args = parse_args(__doc__)

    from pyspark.sql import functions as F  # noqa: N812
    from pyspark.sql.protobuf.functions import from_protobuf

    from connector_base.spark import local_spark_session
    from integration_tests.connectors.formats.from_protobuf_oracle import spark_protobuf_jars
    from sparkflow_testing.maven import MavenError
    from sparkflow_testing.spark.kafka_source import NEWEST_SERVED, spark_kafka_jars

    with registry_bench(args.partitions, PROTO, "PROTOBUF") as bench:
        registry, broker, topic, schema_id = bench.registry, bench.broker, bench.topic, bench.schema_id
        t0 = time.perf_counter()
        values, descriptor_set = encode(schema_id, args.records)
        produce(broker.bootstrap, topic, values, since=t0)

        from connectors.formats.protobuf_native import native_protobuf_decoder

        decode_native_and_pure(
            values, registry.url, topic, "protobuf-confluent", native_protobuf_decoder() is not None,
            ("native (ProtobufBatchDecoder)", "protobuf-runtime", "SPARKFLOW_PROTOBUF_DECODER"),
        )  # fmt: skip
        del values

        try:
            protobuf_jars = spark_protobuf_jars()
        except MavenError as exc:
            print(
                f"spark-protobuf unavailable ({str(exc).splitlines()[0]}): "
                "baseline is spark-kafka-raw (no decoding)"
            )
            protobuf_jars = []
        jars = [str(p) for p in spark_kafka_jars(NEWEST_SERVED)] + protobuf_jars
        spark = bench.spark = local_spark_session("bench-protobuf", cores=2, spark__jars=",".join(jars))
        spark.sparkContext.setLogLevel("ERROR")

        def ours() -> int:
            df = (
                spark.read.format("kafka-unified")
                .option("kafka.bootstrap.servers", broker.bootstrap)
                .option("subscribe", topic)
                .option("valueFormat", "protobuf-confluent")
                .option("schemaRegistry.url", registry.url)
                .load()
            )
            return int(df.where("placed_at is not null").count())  # always set (id 0 reads as null)

        def raw() -> int:
            df = (
                spark.read.format("kafka")
                .option("kafka.bootstrap.servers", broker.bootstrap)
                .option("subscribe", topic)
                .load()
            )
            return int(df.where("value is not null").count())

        def theirs() -> int:
            df = (
                spark.read.format("kafka")
                .option("kafka.bootstrap.servers", broker.bootstrap)
                .option("subscribe", topic)
                .load()
                .select(
                    from_protobuf(
                        F.expr("substring(value, 7)"), "bench.Order", binaryDescriptorSet=descriptor_set
                    ).alias("v")
                )
            )
            return int(df.where("v is not null").count())

        readers = {"kafka-unified": ours, "spark-kafka-raw": raw}
        if protobuf_jars:
            readers["spark-from-protobuf"] = theirs
        best = best_of(readers, args.warmup, args.rounds, args.records)
        print(
            "best: "
            + ", ".join(f"{name} {took:.2f}s" for name, took in best.items())
            + f"; kafka-unified of spark-kafka-raw (a floor: it decodes nothing) "
            f"{best['spark-kafka-raw'] / best['kafka-unified']:.2f}"
        )
        if protobuf_jars:
            print(
                "ratio kafka-unified/spark-from-protobuf = "
                f"{best['spark-from-protobuf'] / best['kafka-unified']:.2f}x (goal >= 1.0x)"
            )


if __name__ == "__main__":
    main()
