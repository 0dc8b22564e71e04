"""Failures: the driver SIGKILLed at several points; a broker restarted on its own storage during a query."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from connector_base.spark.partition_reader import read_splits_as_arrow
from connector_base.split_reader import SplitsAddition
from connector_base.testing.driver_process import DriverProcess, log_entries
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.record_emitter import arrow_schema
from connectors.kafka.source import KafkaSource
from connectors.kafka.split import KafkaPartitionSplit
from integration_tests.connectors.kafka.conftest import require
from integration_tests.connectors.kafka.helpers import memory_query, stream, wait_rows
from sparkflow_testing.kafka.broker import Gap, KafkaBroker

pytestmark = [pytest.mark.spark, pytest.mark.integration]

DRIVER = Path(__file__).resolve().parents[2] / "connector_base" / "kill_driver.py"


def _start_driver(
    broker: KafkaBroker, topic: str, out: Path, chk: Path, available_now: bool = False
) -> DriverProcess:
    options = {
        "kafka.bootstrap.servers": broker.bootstrap,
        "subscribe": topic,
        "startingOffsets": "earliest",
        "maxOffsetsPerTrigger": "300",
    }
    args = ["kafka-unified", str(chk), str(out), json.dumps(options), "--columns", "value,partition,offset"]
    return DriverProcess(DRIVER, args + ([] if available_now else ["--trigger-ms", "100"]))


@pytest.mark.timeout(1200)
def test_driver_killed_at_several_points_restarts_exactly_once(
    spark: Any, reference_broker: KafkaBroker, tmp_path: Path
) -> None:
    topic = reference_broker.create_topic(3)
    out, chk = tmp_path / "out", tmp_path / "chk"
    produced = 0

    def produce(n: int) -> None:
        nonlocal produced
        reference_broker.produce(topic, [f"r{produced + i}".encode() for i in range(n)])
        produced += n

    produce(3000)
    # 1: killed right after a new micro-batch was planned (offset log written, batch not committed)
    driver = _start_driver(reference_broker, topic, out, chk)
    driver.wait_for(lambda: log_entries(chk / "offsets") >= 2)
    driver.kill()
    produce(1000)
    # 2: killed while running, at an arbitrary moment after some output was committed
    driver = _start_driver(reference_broker, topic, out, chk)
    committed = log_entries(chk / "commits")
    driver.wait_for(lambda: log_entries(chk / "commits") > committed)
    time.sleep(0.7)
    driver.kill()
    produce(1000)
    # 3: killed as soon as the sink wrote a data file of the next batch (before its commit)
    driver = _start_driver(reference_broker, topic, out, chk)
    files = len(list(out.glob("*.parquet")))
    driver.wait_for(lambda: len(list(out.glob("*.parquet"))) > files)
    driver.kill()
    # finally run to the end of the data
    driver = _start_driver(reference_broker, topic, out, chk, available_now=True)
    assert driver.proc.wait(600) == 0, "the final AvailableNow run failed"
    rows = spark.read.parquet(str(out)).collect()  # only committed files (the sink's metadata log)
    keys = [(r["partition"], r["offset"]) for r in rows]
    assert len(keys) == len(set(keys)), "duplicated records"
    assert sorted(bytes(r["value"]) for r in rows) == sorted(f"r{i}".encode() for i in range(produced))


@pytest.mark.timeout(600)
def test_broker_restart_during_a_query_loses_nothing(
    spark: Any, own_kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    """A broker of the test's own is stopped and started again (same ports, same log directory) mid-query."""
    require(own_kafka_broker, Gap.RESTART)
    broker = own_kafka_broker
    topic = broker.create_topic(2)
    broker.produce(topic, [f"a{i}".encode() for i in range(500)])
    # the claim is "nothing lost across a restart", not "the restart takes under the default 120 s
    # poll timeout": on a loaded machine a JVM broker's stop and start can take a minute or more
    df = stream(
        spark,
        broker,
        subscribe=topic,
        startingOffsets="earliest",
        maxOffsetsPerTrigger="100",
        **{"kafkaConsumer.pollTimeoutMs": "300000"},
    ).load()
    query, table = memory_query(df, tmp_path)
    try:
        wait_rows(spark, table, 100, query)
        began = time.monotonic()
        broker.restart()  # stop the broker's process group and start it again on the same data
        restart_s = time.monotonic() - began
        broker.produce(topic, [f"b{i}".encode() for i in range(500)])
        try:
            rows = wait_rows(spark, table, 1000, query, timeout_s=360)
        except AssertionError as e:  # a broker that died after its restart is named first
            state = broker.exit_reason() or "the broker runs"
            raise AssertionError(f"{state} (its restart took {restart_s:.0f} s); {e}") from e
        time.sleep(1)
        rows = spark.sql(f"select * from {table}").collect()
    finally:
        query.stop()
    keys = [(r["partition"], r["offset"]) for r in rows]
    assert len(keys) == len(set(keys)) == 1000
    assert sorted(bytes(r["value"]) for r in rows) == sorted(
        [f"a{i}".encode() for i in range(500)] + [f"b{i}".encode() for i in range(500)]
    )


@pytest.mark.timeout(300)
def test_an_error_during_a_broker_outage_is_no_proof_of_data_loss(own_kafka_broker: KafkaBroker) -> None:
    """A consumer error (unknown partition, offset out of range) that comes while the broker is down
    finds the offset lookup failing too: that is no proof the records are gone, so the split
    reader keeps its position (it once took the failed lookup for a deleted partition and, with
    ``failOnDataLoss=false``, skipped to the end of the split) and reads every record once the
    broker is back."""
    require(own_kafka_broker, Gap.RESTART)
    broker = own_kafka_broker
    topic = broker.create_topic(1)
    broker.produce(topic, [f"v{i}".encode() for i in range(100)])
    opts = KafkaSourceOptions.parse(
        {
            "kafka.bootstrap.servers": broker.bootstrap,
            "subscribe": topic,
            "failOnDataLoss": "false",
            "kafka.default.api.timeout.ms": "3000",
        },
        True,
    )
    make_reader, _emitter = KafkaSource(opts).reader_parts()
    reader = make_reader()
    split = KafkaPartitionSplit(topic, 0, 0, 100)
    try:
        reader.handle_splits_changes(SplitsAddition([split]))
        assigned = reader._splits[split.split_id]
        broker.kill()
        reader._check_available(assigned, reported="Broker: Unknown topic or partition")
        assert assigned.next_offset == 0, "a failed lookup during an outage was taken for lost records"
    finally:
        reader.close()
        broker.restart()
    batches = read_splits_as_arrow(KafkaSource(opts), [split], arrow_schema(False), batch_rows=1000)
    rows = [r for b in batches for r in b.to_pylist()]
    assert [bytes(r["value"]) for r in rows] == [f"v{i}".encode() for i in range(100)]
