"""Bad input on kafka-unified (issue 17 §3, §4): a restart on another topic, topics that do not
exist, secrets kept out of errors, logs and offsets, and pooled consumers closed once idle."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import pytest

from connectors.kafka import consumer_pool
from connectors.kafka.options import KafkaSourceOptions
from integration_tests.connectors.kafka.conftest import _kinds
from integration_tests.connectors.kafka.helpers import reader, split_reader_class, stream
from integration_tests.connectors.parquet_sink import run_available_now
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.kafka.brokers import start_broker

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def _available_now(spark: Any, broker: KafkaBroker, checkpoint: Path, **options: str) -> int:
    out = checkpoint.parent / f"out-{checkpoint.name}"
    run_available_now(stream(spark, broker, startingOffsets="earliest", **options).load(), out, checkpoint)
    return spark.read.parquet(str(out)).count() if out.exists() else 0


def test_restart_on_another_topic_fails_naming_both(
    spark: Any, reference_broker: KafkaBroker, tmp_path
) -> None:
    first, second = reference_broker.create_topic(1), reference_broker.create_topic(1)
    reference_broker.produce(first, [b"a", b"b"])
    reference_broker.produce(second, [b"c"])
    checkpoint = tmp_path / "chk"
    assert _available_now(spark, reference_broker, checkpoint, subscribe=first) == 2
    # match=: another failure (Spark's worker start limit on a loaded machine) must surface as itself,
    # whole, where make test's re-run rule can see it, not as a failed assertion on its message
    with pytest.raises(Exception, match="checkpoint was written for another source") as info:
        _available_now(spark, reference_broker, checkpoint, subscribe=second)
    message = str(info.value)
    assert f"{first}-0" in message and f"subscribe={second}" in message
    # a wider subscription is a change Spark allows: the new topic is read from its start
    assert _available_now(spark, reference_broker, checkpoint, subscribe=f"{first},{second}") == 3


def test_missing_topic_fails_with_assign_and_reads_nothing_with_subscribe(
    spark: Any, reference_broker: KafkaBroker, caplog: Any
) -> None:
    """As Spark's Kafka source: ``assign`` of a topic that does not exist fails; of a partition an
    existing topic lacks, reads the partitions that exist (found by the differential harness: Spark
    read 0 rows where this source refused); ``subscribe`` of a missing topic reads nothing."""
    missing = f"missing-{os.getpid()}-{time.monotonic_ns()}"
    with pytest.raises(Exception, match=f"option .assign. names topics that do not exist.*{missing}"):
        reader(spark, reference_broker, assign=f'{{"{missing}":[0]}}').load().collect()
    assert reader(spark, reference_broker, subscribe=missing).load().collect() == []
    topic = reference_broker.create_topic(1)
    reference_broker.produce(topic, [b"a", b"b"], partition=0)
    rows = reader(spark, reference_broker, assign=f'{{"{topic}":[0, 7]}}').load().collect()
    assert sorted(bytes(r["value"]) for r in rows) == [b"a", b"b"]
    with pytest.raises(Exception, match=f"Invalid value '{topic}-3' for option 'startingOffsets'"):
        reader(
            spark, reference_broker, assign=f'{{"{topic}":[0]}}', startingOffsets=f'{{"{topic}":{{"3":0}}}}'
        ).load()


def test_no_secret_in_errors_logs_or_offsets(
    spark: Any, reference_broker: KafkaBroker, tmp_path, capfd
) -> None:
    topic = reference_broker.create_topic(1)
    reference_broker.produce(topic, [b"a"])
    for name in ("awsSecretKey", "passwd", "sasl.jaas.config", "startingOffsetz"):
        value = SECRET if name != "sasl.jaas.config" else f'x required username="u" password="{SECRET}";'
        for load in (
            lambda n=name, v=value: reader(spark, reference_broker, subscribe=topic, **{n: v}).load(),
            lambda n=name, v=value: stream(spark, reference_broker, subscribe=topic, **{n: v}).load(),
        ):
            # match=: any other failure (Spark's worker start limit on a loaded machine) surfaces whole
            with pytest.raises(Exception, match=f"(?i){re.escape(name)}") as info:
                load()
            assert SECRET not in str(info.value)
    checkpoint = tmp_path / "chk"
    assert (
        _available_now(
            spark, reference_broker, checkpoint, subscribe=topic, **{"kafka.ssl.key.password": SECRET}
        )
        == 1
    )
    for path in checkpoint.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    # planning and reading run in Spark's Python workers: their log lines reach this process's fds
    printed = capfd.readouterr()
    assert SECRET not in printed.out and SECRET not in printed.err


@pytest.mark.parametrize("module", ["plain.PlainLoginModule", "scram.ScramLoginModule"])
def test_a_jaas_password_without_a_username_is_never_shown(
    spark: Any, reference_broker: KafkaBroker, capfd: Any, module: str
) -> None:
    # a password as people choose them: nothing about its shape says "secret", only its place does
    password = "correct-horse-battery"
    jaas = f'org.apache.kafka.common.security.{module} required password="{password}" serviceName=kafka;'
    topic = reference_broker.create_topic(1)
    for load in (
        lambda: reader(spark, reference_broker, subscribe=topic, **{"kafka.sasl.jaas.config": jaas}).load(),
        lambda: stream(spark, reference_broker, subscribe=topic, **{"kafka.sasl.jaas.config": jaas}).load(),
    ):
        with pytest.raises(Exception, match=r'(?s)kafka\.sasl\.jaas\.config.*both username="\.\.\."') as info:
            load()
        assert password not in str(info.value), str(info.value)
    printed = capfd.readouterr()
    assert password not in printed.out and password not in printed.err


def test_idle_pooled_consumers_are_closed_and_stop_logging_once_the_broker_is_gone(capfd: Any) -> None:
    kind = "apache-kafka" if "apache-kafka" in _kinds() else _kinds()[0]
    broker = start_broker(kind)
    try:
        topic = broker.create_topic(1)
        broker.produce(topic, [b"x"] * 10)
        from confluent_kafka import TopicPartition

        options = KafkaSourceOptions.parse(
            {"kafka.bootstrap.servers": broker.bootstrap, "subscribe": topic}, False
        )
        consumer_pool.set_idle_timeout(2.0)
        # consumers left idle by earlier tests in this process close first (the same timeout)
        deadline = time.monotonic() + 30
        while consumer_pool.pool_size()[1] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert consumer_pool.pool_size()[1] == 0, "earlier tests' idle consumers were not closed"
        reader_class = split_reader_class(options)  # kafka.reader's consumers
        key, consumer, _pooled = consumer_pool.acquire(
            options.consumer_config(), reader_class._create_consumer
        )
        consumer.incremental_assign([TopicPartition(topic, 0, 0)])
        read = 0
        deadline = time.monotonic() + 60
        while read < 10 and time.monotonic() < deadline:
            if hasattr(consumer, "consume_events"):  # the compiled reader's consumer
                events = consumer.consume_events(10, 1.0, False)
                read += sum(e[5].num_rows for e in events if e[0] == "records")
            else:
                read += sum(1 for m in consumer.consume(10, 1.0) if not m.error())
        assert read == 10
        consumer_pool.release(key, consumer)
        assert consumer_pool.pool_size()[1] == 1
        broker.kill()
        port = broker.bootstrap.rsplit(":", 1)[1]
        deadline = time.monotonic() + 30
        while consumer_pool.pool_size()[1] and time.monotonic() < deadline:
            time.sleep(0.2)
        assert consumer_pool.pool_size()[1] == 0, "the idle consumer was not closed"
        capfd.readouterr()
        time.sleep(5)
        after_close = [
            line for line in capfd.readouterr().err.splitlines() if port in line or "rdkafka" in line
        ]
        assert after_close == [], after_close[:5]
    finally:
        consumer_pool.set_idle_timeout(consumer_pool.IDLE_TIMEOUT_S)
        broker.stop()
