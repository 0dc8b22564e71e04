"""Option parsing and validation of ``kafka-unified`` (no network)."""

from __future__ import annotations

import pytest

from connector_base import InvalidOptionError
from connectors.kafka.options import RECONNECT_BACKOFF_MS, KafkaSourceOptions, SubscriptionKind
from connectors.kafka.sink import KafkaSinkOptions

BASE = {"kafka.bootstrap.servers": "h:9092"}


def parse(streaming: bool = False, **options: str) -> KafkaSourceOptions:
    return KafkaSourceOptions.parse({**BASE, **options}, streaming)


def test_subscriptions() -> None:
    assert parse(subscribe="a, b").subscription.topics == ("a", "b")
    pat = parse(subscribePattern="t-.*").subscription
    assert pat.kind is SubscriptionKind.SUBSCRIBE_PATTERN and pat.matches("t-1") and not pat.matches("x-t-1")
    assigned = parse(assign='{"a":[1,0],"b":[2]}').subscription
    assert assigned.partitions == (("a", 0), ("a", 1), ("b", 2))


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({}, "exactly one of"),
        ({"subscribe": "a", "assign": '{"a":[0]}'}, "exactly one of"),
        ({"subscribe": " , "}, "'subscribe'"),
        ({"subscribePattern": "("}, "'subscribePattern'"),
        ({"assign": "[1]"}, "'assign'"),
        ({"assign": '{"a":[-1]}'}, "'assign'"),
        ({"subscribe": "a", "startingOffsets": "latest"}, "'startingOffsets'"),
        ({"subscribe": "a", "startingOffsets": '{"a":{"0":-1}}'}, "'startingOffsets'"),
        ({"subscribe": "a", "startingOffsets": "soon"}, "'startingOffsets'"),
        ({"subscribe": "a", "endingOffsets": "earliest"}, "'endingOffsets'"),
        ({"subscribe": "a", "endingOffsets": '{"a":{"0":-2}}'}, "'endingOffsets'"),
        ({"subscribe": "a", "failOnDataLoss": "maybe"}, "'failOnDataLoss'"),
        ({"subscribe": "a", "minPartitions": "0"}, "'minPartitions'"),
        ({"subscribe": "a", "maxOffsetsPerTrigger": "x"}, "'maxOffsetsPerTrigger'"),
        (
            {"subscribe": "a", "maxOffsetsPerTrigger": "5", "minOffsetsPerTrigger": "10"},
            "'minOffsetsPerTrigger'",
        ),
        ({"subscribe": "a", "maxTriggerDelay": "soon"}, "'maxtriggerdelay'"),
        (
            {"subscribe": "a", "startingOffsetsByTimestampStrategy": "closest"},
            "'startingOffsetsByTimestampStrategy'",
        ),
        ({"subscribe": "a", "startingOffsets": "committed"}, "'kafka.group.id'"),
        ({"subscribe": "a", "commitOffsetsToGroup": "true"}, "'kafka.group.id'"),
        ({"subscribe": "a", "kafka.auto.offset.reset": "earliest"}, "'kafka.auto.offset.reset'"),
        ({"subscribe": "a", "kafka.enable.auto.commit": "true"}, "'kafka.enable.auto.commit'"),
        ({"subscribe": "a", "kafka.key.deserializer": "x"}, "'kafka.key.deserializer'"),
        ({"subscribe": "a", "kafka.value.deserializer": "x"}, "'kafka.value.deserializer'"),
        ({"subscribe": "a", "kafka.interceptor.classes": "x"}, "'kafka.interceptor.classes'"),
        ({"subscribe": "a", "kafka.isolation.level": "dirty"}, "'kafka.isolation.level'"),
        ({"subscribe": "a", "colour": "red"}, "'colour'"),
    ],
)
def test_invalid_batch_options(options: dict[str, str], fragment: str) -> None:
    with pytest.raises(InvalidOptionError) as info:
        parse(**options)
    assert fragment in str(info.value)


def test_bootstrap_is_required() -> None:
    with pytest.raises(InvalidOptionError, match="'kafka.bootstrap.servers'"):
        KafkaSourceOptions.parse({"subscribe": "a"}, False)


@pytest.mark.parametrize("key", ["endingOffsets", "endingOffsetsByTimestamp", "endingTimestamp"])
def test_ending_offsets_are_rejected_in_streaming(key: str) -> None:
    value = '{"a":{"0":1}}' if key == "endingOffsetsByTimestamp" else "1"
    with pytest.raises(InvalidOptionError, match=f"'{key}'"):
        parse(True, subscribe="a", **{key: value})


def test_defaults_follow_spark() -> None:
    batch = parse(subscribe="a")
    assert batch.starting.describe() == "earliest" and batch.ending is not None
    assert batch.ending.describe() == "latest" and batch.fail_on_data_loss and not batch.include_headers
    streaming = parse(True, subscribe="a")
    assert streaming.starting.describe() == "latest" and streaming.ending is None
    assert streaming.consumer_config()["isolation.level"] == "read_uncommitted"
    assert parse(True, subscribe="a", minOffsetsPerTrigger="5").max_trigger_delay_ms == 15 * 60 * 1000


def test_max_records_per_packed_partition() -> None:
    assert parse(subscribe="a").max_records_per_packed_partition == 65_536
    assert parse(subscribe="a", maxRecordsPerPackedPartition="0").max_records_per_packed_partition == 0
    assert parse(subscribe="a", maxrecordsperpackedpartition="10").max_records_per_packed_partition == 10
    for bad in ("-1", "x", "1.5"):
        with pytest.raises(InvalidOptionError, match="'maxRecordsPerPackedPartition'.*an integer >= 0"):
            parse(subscribe="a", maxRecordsPerPackedPartition=bad)


def test_executor_fetch_wait_is_short_unless_set() -> None:
    # a pooled consumer's fetch parked at the end of its last split delays the next task's first
    # fetch by this much: bounded splits (every Spark task) wait least
    assert parse(subscribe="a").consumer_config()["fetch.wait.max.ms"] == 2
    assert parse(subscribe="a").consumer_config(bounded=False)["fetch.wait.max.ms"] == 20
    for bounded in (True, False):
        set_by_user = parse(subscribe="a", **{"kafka.fetch.max.wait.ms": "300"}).consumer_config(bounded)
        assert set_by_user["fetch.wait.max.ms"] == "300"


def test_executor_queue_backoff_is_short_unless_set() -> None:
    # librdkafka's default backoff (1 s) idled a large range each time its prefetch queue filled
    assert parse(subscribe="a").consumer_config()["fetch.queue.backoff.ms"] == 10
    set_by_user = parse(subscribe="a", **{"kafka.fetch.queue.backoff.ms": "500"}).consumer_config()
    assert set_by_user["fetch.queue.backoff.ms"] == "500"


def test_precedence_of_starting_positions() -> None:
    opts = parse(
        subscribe="a",
        startingTimestamp="1000",
        startingOffsetsByTimestamp='{"a":{"0":5}}',
        startingOffsets="earliest",
    )
    assert "starting timestamp 1000" in opts.starting.describe()
    opts = parse(subscribe="a", startingOffsetsByTimestamp='{"a":{"0":5}}', startingOffsets="earliest")
    assert "[(('a', 0), 5)]" in opts.starting.describe()


def test_read_limits_and_names_are_case_insensitive() -> None:
    opts = parse(
        True, SUBSCRIBE="a", maxoffsetspertrigger="10", MAXBYTESPERTRIGGER="2048", minOffsetsPerTrigger="3"
    )
    limits = opts.read_limits()
    assert (limits.max_records, limits.max_bytes, limits.min_records) == (10, 2048, 3)


def test_secrets_never_show() -> None:
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="s3cret";'
    opts = parse(subscribe="a", **{"kafka.sasl.jaas.config": jaas, "kafka.ssl.key.password": "kp"})
    assert "s3cret" not in repr(opts) and "kp" not in repr(opts)
    with pytest.raises(InvalidOptionError) as info:
        parse(subscribe="a", **{"kafka.sasl.jaas.config": 'com.example.Login required password="s3cret";'})
    assert "s3cret" not in str(info.value)


def test_sink_options() -> None:
    assert KafkaSinkOptions.parse({**BASE, "topic": "t"}).topic == "t"
    with pytest.raises(InvalidOptionError, match="'kafka.key.serializer'"):
        KafkaSinkOptions.parse({**BASE, "kafka.key.serializer": "x"})
    with pytest.raises(InvalidOptionError, match="'startingOffsets'"):
        KafkaSinkOptions.parse({**BASE, "startingOffsets": "earliest"})


def test_an_empty_group_id_prefix_is_accepted_as_in_spark() -> None:
    raw = {"kafka.bootstrap.servers": "h:1", "subscribe": "t", "groupIdPrefix": ""}
    opts = KafkaSourceOptions.parse(raw, False)
    assert opts.group_id_prefix == ""


@pytest.mark.parametrize(
    ("starting", "ending", "option"),
    [
        ({"startingTimestamp": "2000"}, {"endingTimestamp": "1000"}, "startingTimestamp"),
        (
            {"startingOffsetsByTimestamp": '{"t":{"1":1700000015001}}'},
            {"endingOffsetsByTimestamp": '{"t":{"1":1700000001500}}'},
            "startingOffsetsByTimestamp",
        ),
        ({"startingOffsets": '{"t":{"0":9}}'}, {"endingOffsets": '{"t":{"0":4}}'}, "startingOffsets"),
    ],
)
def test_a_start_after_the_end_of_the_same_form_fails_at_load(
    starting: dict[str, str], ending: dict[str, str], option: str
) -> None:
    """As Spark's KafkaSourceProvider ("The specified start timestamp ... is greater than the end ...")."""
    raw = {"kafka.bootstrap.servers": "h:1", "subscribe": "t", **starting, **ending}
    with pytest.raises(InvalidOptionError, match=f"'{option}'.*at or before"):
        KafkaSourceOptions.parse(raw, False)


def test_bounds_of_different_forms_or_symbols_are_not_compared() -> None:
    base = {"kafka.bootstrap.servers": "h:1", "subscribe": "t"}
    for bounds in (
        {"startingTimestamp": "2000", "endingOffsets": '{"t":{"0":4}}'},
        {"startingOffsets": '{"t":{"0":-2}}', "endingOffsets": '{"t":{"0":4}}'},
        {"startingOffsets": '{"t":{"0":4}}', "endingOffsets": '{"t":{"0":-1}}'},
    ):
        KafkaSourceOptions.parse({**base, **bounds}, False)


def test_a_batch_reads_driver_clients_connect_without_the_reconnect_backoff() -> None:
    base = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "t"}
    batch = KafkaSourceOptions.parse(base, False)
    assert batch.driver_client_config()["reconnect.backoff.ms"] == RECONNECT_BACKOFF_MS
    assert "reconnect.backoff.ms" not in batch.consumer_config()  # executors keep librdkafka's default
    assert "reconnect.backoff.ms" not in KafkaSourceOptions.parse(base, True).driver_client_config()
    chosen = KafkaSourceOptions.parse({**base, "kafka.reconnect.backoff.ms": "250"}, False)
    assert chosen.driver_client_config()["reconnect.backoff.ms"] == "250"  # the user's setting wins
