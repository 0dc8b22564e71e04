"""Java client settings carried over from Spark: translated, used, or refused at load()."""

from __future__ import annotations

from typing import Any

import pytest

from connector_base import InvalidOptionError
from connectors.kafka.java_settings import JAVA_SETTINGS, Handling, check_librdkafka
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.sink import KafkaSinkOptions

SOURCE = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}
SINK = {"kafka.bootstrap.servers": "127.0.0.1:9", "topic": "t"}


def test_consumer_settings_from_the_issue_are_translated() -> None:
    opts = KafkaSourceOptions.parse(
        {
            **SOURCE,
            "kafka.fetch.max.wait.ms": "250",
            "kafka.receive.buffer.bytes": "-1",
            "kafka.request.timeout.ms": "20000",
            "kafka.partition.assignment.strategy": "org.apache.kafka.clients.consumer.RoundRobinAssignor",
            "kafka.max.poll.records": "300",
        },
        streaming=True,
    )
    conf = opts.consumer_config()
    assert conf["fetch.wait.max.ms"] == "250"
    assert conf["socket.receive.buffer.bytes"] == "0"
    assert conf["socket.timeout.ms"] == "20000"
    assert conf["partition.assignment.strategy"] == "roundrobin"
    assert "fetch.max.wait.ms" not in conf and "receive.buffer.bytes" not in conf


def test_producer_settings_from_the_issue_are_translated() -> None:
    opts = KafkaSinkOptions.parse(
        {
            **SINK,
            "kafka.max.request.size": "2097152",
            "kafka.buffer.memory": "33554432",
            "kafka.partitioner.class": "org.apache.kafka.clients.producer.internals.DefaultPartitioner",
            "kafka.compression.type": "zstd",
            "kafka.compression.zstd.level": "5",
        }
    )
    conf = opts.producer_config()
    assert conf["message.max.bytes"] == "2097152"
    assert conf["queue.buffering.max.kbytes"] == "32768"
    assert conf["partitioner"] == "murmur2_random"
    assert conf["compression.level"] == "5"


def test_the_sink_partitions_keys_as_the_java_client_by_default() -> None:
    assert KafkaSinkOptions.parse(SINK).producer_config()["partitioner"] == "murmur2_random"
    ignore = KafkaSinkOptions.parse({**SINK, "kafka.partitioner.ignore.keys": "true"})
    assert ignore.producer_config()["partitioner"] == "random"


def test_default_api_timeout_is_the_connectors_not_librdkafkas() -> None:
    opts = KafkaSourceOptions.parse({**SOURCE, "kafka.default.api.timeout.ms": "4000"}, streaming=False)
    assert opts.api_timeout_ms == 4000
    assert "default.api.timeout.ms" not in opts.consumer_config()


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("kafka.max.block.ms", "delivery.timeout.ms"),
        ("kafka.metrics.num.samples", "statistics.interval.ms"),
        ("kafka.transactional.id", "at-least-once"),
        ("kafka.partitioner.class", "partition"),
    ],
)
def test_refused_settings_fail_at_load_with_what_to_use(name: str, hint: str) -> None:
    with pytest.raises(InvalidOptionError, match=hint) as e:
        KafkaSinkOptions.parse({**SINK, name: "com.example.Custom"})
    assert name in str(e.value)


def test_every_refused_java_setting_fails_with_its_reason() -> None:
    for name, setting in JAVA_SETTINGS.items():
        if setting.handling is Handling.REFUSED:
            with pytest.raises(InvalidOptionError, match=f"kafka.{name}"):
                KafkaSourceOptions.parse({**SOURCE, f"kafka.{name}": "1"}, streaming=True)


def test_every_same_named_java_setting_is_a_librdkafka_setting() -> None:
    samples = {
        "isolation.level": "read_committed",
        "client.dns.lookup": "use_all_dns_ips",
        "acks": "all",
        "group.protocol": "classic",
        "group.remote.assignor": "uniform",
        "compression.type": "lz4",
        "metadata.recovery.strategy": "rebootstrap",
        "client.id": "c",
        "group.instance.id": "i",
        "client.rack": "r",
        "bootstrap.servers": "127.0.0.1:9",
        "group.id": "g",
        "max.poll.interval.ms": "300000",
        "session.timeout.ms": "45000",
        "heartbeat.interval.ms": "3000",
        "fetch.max.bytes": "52428800",
        "batch.size": "16384",
    }
    for name, setting in JAVA_SETTINGS.items():
        if setting.handling is Handling.SAME:
            value = samples.get(name, "true" if name.startswith(("enable.", "check.", "allow.")) else "10000")
            check_librdkafka({name: value}, producer=False)


def test_unknown_settings_fail_at_load_not_at_run_time() -> None:
    with pytest.raises(InvalidOptionError, match=r"kafka\.no\.such\.setting.*No such configuration property"):
        KafkaSourceOptions.parse({**SOURCE, "kafka.no.such.setting": "1"}, streaming=True)
    with pytest.raises(InvalidOptionError, match="kafka.linger.ms"):
        KafkaSinkOptions.parse({**SINK, "kafka.linger.ms": "soon"})


def test_a_java_name_and_its_librdkafka_name_together_are_refused() -> None:
    with pytest.raises(InvalidOptionError, match="together"):
        KafkaSourceOptions.parse(
            {**SOURCE, "kafka.fetch.max.wait.ms": "1", "kafka.fetch.wait.max.ms": "2"}, streaming=True
        )


def test_a_configuration_librdkafka_accepted_is_not_checked_again(monkeypatch: Any) -> None:
    """Every read task parses the options the driver checked at load(); each check makes a client."""
    import confluent_kafka

    made: list[dict[str, Any]] = []
    real = confluent_kafka.Consumer

    def counted(conf: dict[str, Any]) -> Any:  # a real client, counted
        made.append(conf)
        return real(conf)

    monkeypatch.setattr(confluent_kafka, "Consumer", counted)
    config = {"bootstrap.servers": "127.0.0.1:1", "fetch.wait.max.ms": 123, "client.id": "once"}
    check_librdkafka(config, producer=False)
    check_librdkafka(dict(config), producer=False)
    assert len(made) == 1
    check_librdkafka({**config, "fetch.wait.max.ms": 124}, producer=False)  # another configuration
    assert len(made) == 2
    bad = {**config, "fetch.wait.max.ms": "soon"}
    for _ in range(2):  # a refused one is checked, and refused, every time
        with pytest.raises(InvalidOptionError, match="kafka.fetch.wait.max.ms"):
            check_librdkafka(bad, producer=False)
    assert len(made) == 4
