"""Benchmark: the event-time cut (``eventTime.alignment=cut``) on real Kafka.

Two figures, in one Spark session that also has Spark's own Kafka source on its classpath:

- throughput: ``--records`` records (default 50,000) in each of 2 partitions with the same event
  times (no skew), read with ``readStream`` from ``earliest``, ``maxOffsetsPerTrigger`` =
  ``--limit`` (default a fifth of all records), ``Trigger.AvailableNow`` into the ``noop`` sink;
  best of ``--rounds`` (default 3) interleaved runs each with ``off`` and ``cut``; printed: records/s
  and the ratio cut / off (goal: at least 0.9);
- late rows: the issue's query (2 x ``--skew-records`` records, default 3,000, one partition an hour
  behind, ``maxOffsetsPerTrigger=500``, a 10-minute watermark, ``dropDuplicatesWithinWatermark``,
  a 5-minute windowed count) with ``kafka-unified`` off and cut, and with Spark's ``format("kafka")``;
  printed: rows dropped by the watermark and rows counted.

    python -m benchmarks.event_time_cut
    python -m benchmarks.event_time_cut --records 200000 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any

from connector_base.spark import local_spark_session
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.kafka.brokers import start_broker
from sparkflow_testing.kafka.event_time_skew import skewed_topic, watermarked_counts
from sparkflow_testing.spark.kafka_source import served_version, spark_kafka_session_conf


def _load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def _unskewed_topic(broker: KafkaBroker, records: int) -> str:
    topic = broker.create_topic(2)
    base = int(time.time() * 1000) - records * 10
    for partition in (0, 1):
        broker.produce(
            topic,
            [b"x" * 100] * records,
            partition=partition,
            timestamps=[base + i * 10 for i in range(records)],
        )
    return topic


def _stream_seconds(
    spark: Any, broker: KafkaBroker, topic: str, limit: int, cut: bool, scratch: str
) -> float:
    reader = (
        spark.readStream.format("kafka-unified")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(limit))
    )
    if cut:
        reader = reader.option("eventTime.alignment", "cut")
    began = time.monotonic()
    query = (
        reader.load()
        .selectExpr("length(value) as n")
        .writeStream.format("noop")
        .option("checkpointLocation", tempfile.mkdtemp(dir=scratch))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    if query.exception() is not None:
        raise SystemExit(f"query failed: {query.exception()}")
    return time.monotonic() - began


def _skewed(spark: Any, broker: KafkaBroker, records: int, scratch: str) -> None:
    topic = skewed_topic(broker, records)
    for label, fmt, extra in (
        ("kafka-unified off", "kafka-unified", {}),
        ("kafka-unified cut", "kafka-unified", {"eventTime.alignment": "cut", "alignment.maxDrift": "1m"}),
        (f"Spark kafka {served_version()}", "kafka", {}),
    ):
        df = (
            spark.readStream.format(fmt)
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "500")
            .options(**extra)
            .load()
        )
        got = watermarked_counts(spark, df, scratch)
        print(
            f"{label}: {got.dropped} rows dropped by the watermark, {got.counted} of {2 * records} counted, "
            f"{got.batches} batches, {got.seconds:.1f} s ({_load()})",
            flush=True,
        )


def main() -> None:
    """Run both figures."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=50_000, help="records per partition (throughput)")
    parser.add_argument("--limit", type=int, default=None, help="maxOffsetsPerTrigger (throughput)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skew-records", type=int, default=3000, help="records per partition (late rows)")
    parser.add_argument("--broker", default="apache-kafka")
    args = parser.parse_args()
    broker = start_broker(args.broker)
    spark = local_spark_session(
        "event-time-cut-benchmark",
        cores=2,
        # a loaded machine: Python workers may take longer than the default 15 s to connect back
        spark__python__authenticate__socketTimeout="120s",
        **spark_kafka_session_conf(),
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        with tempfile.TemporaryDirectory() as scratch:
            topic = _unskewed_topic(broker, args.records)
            limit = args.limit or max(1, 2 * args.records // 5)
            _stream_seconds(spark, broker, topic, limit, False, scratch)  # warm-up
            times: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(args.rounds):
                for cut in (False, True):
                    times[cut].append(_stream_seconds(spark, broker, topic, limit, cut, scratch))
            total = 2 * args.records
            off, on = min(times[False]), min(times[True])
            print(
                f"throughput, 2 x {args.records} unskewed records, maxOffsetsPerTrigger={limit}: "
                f"off {total / off:,.0f} records/s ({off:.2f} s), cut {total / on:,.0f} records/s "
                f"({on:.2f} s), cut/off {off / on:.2f} ({_load()})",
                flush=True,
            )
            _skewed(spark, broker, args.skew_records, scratch)
    finally:
        spark.stop()
        broker.stop()


if __name__ == "__main__":
    main()
