"""Options of ``kafka-unified`` (Spark's Kafka source options plus a few more), parsed once."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from connector_base import InvalidOptionError
from connector_base.spark import ReadLimitOptions, parse_duration_ms
from connectors.formats.format_options import is_format_option
from connectors.kafka.client_config import REDACTED, redact, translate_client_options
from connectors.kafka.fetch_sizing import MAX_FETCH_BYTES
from connectors.kafka.java_settings import check_librdkafka, translate_java_settings
from connectors.kafka.positions import EARLIEST, LATEST, OffsetsInitializer, TimestampStrategy, TopicPartition
from connectors.kafka.reader_choice import KafkaReader, resolve_reader

__all__ = ["KafkaSourceOptions", "Subscription", "SubscriptionKind", "parse_subscription"]

DEFAULT_GROUP_ID_PREFIX = "spark-kafka-source"
DEFAULT_CONSUME_BATCH = 20_000
"""Records per consume of the Python reader (``kafka.reader=python``) unless ``consumeBatchSize`` is set."""
NATIVE_CONSUME_BATCH = 65_536
"""Records per consume of the compiled reader unless ``consumeBatchSize`` is set: one consume is one
Arrow batch of a split, handed to Spark as it is when it has the bridge's ``DEFAULT_BATCH_ROWS``
(65,536) rows. At 20,000 the bridge joined four of them into one batch, a copy that cost ~230 ns
of the ~870 ns per record a task spent (in-process, 100k lz4 records of 200 B with a header, warm:
~640 ns per record at 65,536)."""
DEFAULT_MAX_RECORDS_PER_PACKED_PARTITION = 65_536
"""``maxRecordsPerPackedPartition`` unless set: small offset ranges share a Spark task up to this many
records (with each range's open cost, ``planner.PACKED_TASK_OPEN_COST_RECORDS``), one Arrow batch."""
DEFAULT_MAX_TRIGGER_DELAY_MS = 15 * 60 * 1000
DEFAULT_POLL_TIMEOUT_MS = 120_000
DEFAULT_API_TIMEOUT_MS = 30_000
"""Bound of the connector's metadata and offset requests (``kafka.default.api.timeout.ms``)."""
EXECUTOR_FETCH_WAIT_MAX_MS = 20
"""``fetch.wait.max.ms`` of consumers that read unbounded splits (the local runtime) unless
``kafka.fetch.max.wait.ms`` is set (see ``consumer_config``)."""
BOUNDED_FETCH_WAIT_MAX_MS = 2
"""``fetch.wait.max.ms`` of consumers that read bounded splits (every Spark task, batch or
micro-batch) unless ``kafka.fetch.max.wait.ms`` is set.

librdkafka sends a partition's next fetch as soon as the last one is answered, so a split that
reaches its stopping offset leaves a fetch at the end of the log parked at the broker for this
long, and the broker answers that connection in order: the pooled consumer's next task waited
that long for its first records (real Kafka 4.1.1, back-to-back single-record splits: 23-25 ms at
20, 13-15 ms at 10, 7-11 ms at 5, 4-6 ms at 2, 3-4 ms at 1; 2.5-4 ms after an idle pause). A
bounded split's range ends at offsets known to exist (the last stable offset under
``read_committed``), so the short wait costs nothing while records remain; the price is a fetch
every few ms from a read that waits at the end of the log, which only a split whose stopping
offset lies beyond the log's end does (given as ``endingOffsets``, failing after
``kafkaConsumer.pollTimeoutMs``)."""
FETCH_QUEUE_BACKOFF_MS = 10
"""The executors' consumers' ``fetch.queue.backoff.ms`` unless set (librdkafka's default is 1,000).

A partition whose queue of fetched messages holds ``queued.min.messages`` (100,000) is not fetched
again for this long, even once the reader has drained it: the next fetch waits out the backoff.
A reader outpaces one second of prefetch, so a large range stalled about a second each time its
queue filled. 3,000,000 records in 6 partitions (three reads each): random ones took 2.67-4.01 s
with librdkafka's default and 2.20-2.55 s at 10 ms; lz4-compressed ones with
``kafka.max.partition.fetch.bytes=1048576`` (the Java client's default, which users bring from
Spark) 10.1-13.3 s against 1.85-2.05 s. Every 10 ms the client looks again at a full queue, which
costs nothing measurable."""
RECONNECT_BACKOFF_MS = 10
"""A batch read's driver clients' ``reconnect.backoff.ms`` unless ``kafka.reconnect.backoff.ms`` is set.

librdkafka waits about half its backoff (default 100 ms) before it connects to a broker that a
client's first metadata answer named, even with no failure before: a new client's first request
took 55-60 ms against real Kafka 4.1.1 on loopback, and 16 ms with 10 ms (30 ms with 50, the Java
client's default). A batch read's planning made two new clients (about 0.11 s of a small query)."""

_SOURCE_OPTIONS = {
    "assign",
    "subscribe",
    "subscribepattern",
    "startingoffsets",
    "startingoffsetsbytimestamp",
    "startingtimestamp",
    "startingoffsetsbytimestampstrategy",
    "endingoffsets",
    "endingoffsetsbytimestamp",
    "endingtimestamp",
    "failondataloss",
    "kafkaconsumer.polltimeoutms",
    "fetchoffset.numretries",
    "fetchoffset.retryintervalms",
    "maxoffsetspertrigger",
    "minoffsetspertrigger",
    "maxtriggerdelay",
    "maxbytespertrigger",
    "minpartitions",
    "maxrecordsperpartition",
    "groupidprefix",
    "includeheaders",
    # beyond Spark
    "committedoffsetsfallback",
    "commitoffsetstogroup",
    "partitiondiscoveryintervalms",
    "consumebatchsize",
    "maxrecordsperpackedpartition",
    # the bridge
    "arrowbatchrows",
    "kafka.reader",
    "filterpushdown",
    # the sink
    "topic",
    # Spark passes these through
    "path",
}


class SubscriptionKind(Enum):
    """How partitions are chosen."""

    ASSIGN = "assign"
    SUBSCRIBE = "subscribe"
    SUBSCRIBE_PATTERN = "subscribePattern"


@dataclass(frozen=True, slots=True)
class Subscription:
    """``assign`` (fixed partitions), ``subscribe`` (topic list) or ``subscribePattern`` (regex)."""

    kind: SubscriptionKind
    topics: tuple[str, ...] = ()
    partitions: tuple[TopicPartition, ...] = ()
    pattern: str | None = None

    def matches(self, topic: str) -> bool:
        """Whether ``topic`` belongs to the subscription."""
        match self.kind:
            case SubscriptionKind.SUBSCRIBE:
                return topic in self.topics
            case SubscriptionKind.SUBSCRIBE_PATTERN:
                assert self.pattern is not None
                return re.fullmatch(self.pattern, topic) is not None
            case _:
                return any(t == topic for t, _p in self.partitions)


def _bool(opts: Mapping[str, str], key: str, name: str, default: bool) -> bool:
    raw = opts.get(key)
    if raw is None:
        return default
    if raw.strip().lower() not in ("true", "false"):
        raise InvalidOptionError(name, raw, "true or false")
    return raw.strip().lower() == "true"


def _int(opts: Mapping[str, str], key: str, name: str, minimum: int) -> int | None:
    raw = opts.get(key)
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise InvalidOptionError(name, raw, f"an integer >= {minimum}") from None
    if value < minimum:
        raise InvalidOptionError(name, raw, f"an integer >= {minimum}")
    return value


def _default(value: int | None, default: int) -> int:
    return default if value is None else value


def _json(raw: str, name: str, expected: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        raise InvalidOptionError(name, raw, expected) from None


def _partition_map(raw: str, name: str, expected: str) -> dict[TopicPartition, int]:
    data = _json(raw, name, expected)
    if not isinstance(data, dict) or not data:
        raise InvalidOptionError(name, raw, expected)
    out: dict[TopicPartition, int] = {}
    for topic, parts in data.items():
        if not isinstance(parts, dict):
            raise InvalidOptionError(name, raw, expected)
        for p, v in parts.items():
            try:
                out[(str(topic), int(p))] = int(v)
            except (TypeError, ValueError):
                raise InvalidOptionError(name, raw, expected) from None
    return out


def parse_subscription(opts: Mapping[str, str]) -> Subscription:
    """``assign`` / ``subscribe`` / ``subscribePattern`` of lower-case ``opts``."""
    given = [k for k in ("assign", "subscribe", "subscribepattern") if k in opts]
    if len(given) != 1:
        raise InvalidOptionError(
            "assign/subscribe/subscribePattern",
            given or None,
            "exactly one of 'assign', 'subscribe', 'subscribePattern'",
        )
    key = given[0]
    raw = opts[key]
    if key == "subscribe":
        topics = tuple(t.strip() for t in raw.split(",") if t.strip())
        if not topics:
            raise InvalidOptionError("subscribe", raw, "a comma-separated list of topics")
        return Subscription(SubscriptionKind.SUBSCRIBE, topics=topics)
    if key == "subscribepattern":
        if not raw.strip():
            raise InvalidOptionError("subscribePattern", raw, "a non-empty regular expression")
        try:
            re.compile(raw)
        except re.error as e:
            raise InvalidOptionError("subscribePattern", raw, f"a valid regular expression ({e})") from None
        return Subscription(SubscriptionKind.SUBSCRIBE_PATTERN, pattern=raw.strip())
    expected = 'JSON such as {"topicA":[0,1],"topicB":[2,4]}'
    data = _json(raw, "assign", expected)
    if not isinstance(data, dict) or not data:
        raise InvalidOptionError("assign", raw, expected)
    parts: list[TopicPartition] = []
    for topic, ps in data.items():
        if not isinstance(ps, list) or not all(isinstance(p, int) and p >= 0 for p in ps):
            raise InvalidOptionError("assign", raw, expected)
        parts.extend((str(topic), int(p)) for p in ps)
    if not parts:
        raise InvalidOptionError("assign", raw, expected)
    return Subscription(SubscriptionKind.ASSIGN, partitions=tuple(sorted(set(parts))))


def _starting(opts: Mapping[str, str], streaming: bool, strategy: TimestampStrategy) -> OffsetsInitializer:
    # precedence as Spark: startingTimestamp > startingOffsetsByTimestamp > startingOffsets
    if "startingtimestamp" in opts:
        ms = _int(opts, "startingtimestamp", "startingTimestamp", 0)
        assert ms is not None
        return OffsetsInitializer.timestamp(ms, strategy, "starting")
    if "startingoffsetsbytimestamp" in opts:
        per = _partition_map(
            opts["startingoffsetsbytimestamp"],
            "startingOffsetsByTimestamp",
            'JSON such as {"topicA":{"0":1700000000000,"1":1700000000000}}',
        )
        return OffsetsInitializer.timestamps(per, strategy, "starting")
    raw = opts.get("startingoffsets")
    default = "latest" if streaming else "earliest"
    value = (raw if raw is not None else default).strip()
    match value.lower():
        case "earliest":
            return OffsetsInitializer.earliest()
        case "latest":
            if not streaming:
                raise InvalidOptionError(
                    "startingOffsets", raw, "'earliest' or JSON offsets for batch queries (not 'latest')"
                )
            return OffsetsInitializer.latest()
        case "committed":
            fb_raw = opts.get("committedoffsetsfallback", "earliest").strip().lower()
            fallbacks = {"earliest": EARLIEST, "latest": LATEST, "none": None}
            if fb_raw not in fallbacks:
                raise InvalidOptionError("committedOffsetsFallback", fb_raw, "earliest, latest or none")
            if "kafka.group.id" not in opts:
                raise InvalidOptionError(
                    "kafka.group.id", None, "a consumer group when startingOffsets=committed"
                )
            return OffsetsInitializer.committed(fallbacks[fb_raw])
    expected = (
        "'earliest', 'latest' (streaming), 'committed' or JSON such as {\"topicA\":{\"0\":23,\"1\":-2}}"
    )
    if not value.startswith("{"):
        raise InvalidOptionError("startingOffsets", raw, expected)
    offsets = _partition_map(value, "startingOffsets", expected)
    for (t, p), o in offsets.items():
        if o < EARLIEST or (o == LATEST and not streaming):
            raise InvalidOptionError(
                "startingOffsets",
                raw,
                f"offsets >= 0, -2 (earliest){' or -1 (latest)' if streaming else ''}; {t}-{p} has {o}",
            )
    return OffsetsInitializer.specific(offsets, EARLIEST)


_BOUND_FORMS = (("Timestamp", "timestamp"), ("OffsetsByTimestamp", "timestamp"), ("Offsets", "offset"))
"""The forms of a starting or ending bound, in Spark's precedence, and what their numbers are."""


def _effective_bound(opts: Mapping[str, str], role: str) -> tuple[str, str] | None:
    for suffix, unit in _BOUND_FORMS:
        if (role + suffix).lower() in opts:
            return role + suffix, unit
    return None


def _check_start_not_after_end(opts: Mapping[str, str]) -> None:
    """A starting bound after the ending bound of the same form fails at ``load()``, as in Spark
    (``KafkaSourceProvider``: "The specified start timestamp ... is greater than the end timestamp")."""
    start, end = _effective_bound(opts, "starting"), _effective_bound(opts, "ending")
    if start is None or end is None or start[0][len("starting") :] != end[0][len("ending") :]:
        return
    (s_name, unit), (e_name, _unit) = start, end
    s_raw, e_raw = opts[s_name.lower()].strip(), opts[e_name.lower()].strip()
    if s_name == "startingTimestamp":
        try:
            pairs = [("every partition", int(s_raw), int(e_raw))]
        except ValueError:
            return  # the parsers name the malformed value
    else:
        if not (s_raw.startswith("{") and e_raw.startswith("{")):
            return
        s_map = _partition_map(s_raw, s_name, "JSON")
        e_map = _partition_map(e_raw, e_name, "JSON")
        pairs = [
            (f"topic {t} partition {p}", s_map[(t, p)], e_map[(t, p)])
            for t, p in sorted(s_map.keys() & e_map.keys())
            if s_map[(t, p)] >= 0 and e_map[(t, p)] >= 0
        ]
    for where, first, last in pairs:
        if first > last:
            expected = f"a start {unit} at or before {e_name}'s ({last}) for {where}, not {first}"
            raise InvalidOptionError(s_name, opts[s_name.lower()], expected)


def _check_maps_within_subscription(
    subscription: Subscription, starting: OffsetsInitializer, ending: OffsetsInitializer | None
) -> None:
    """A JSON offsets or timestamps map naming a partition outside ``assign`` or a topic outside
    ``subscribe`` fails at ``load()`` (Spark refuses such a map at ``load()`` as well); the partitions
    of subscribed topics are known only from the broker, so those are checked when the read is planned."""
    if subscription.kind is SubscriptionKind.SUBSCRIBE_PATTERN:
        return
    for role, initializer in (("starting", starting), ("ending", ending)):
        if initializer is None:
            continue
        named = initializer.named_partitions()
        if subscription.kind is SubscriptionKind.ASSIGN:
            extra = sorted(named - set(subscription.partitions))
            selected = ", ".join(f"{t}-{p}" for t, p in subscription.partitions)
        else:
            extra = sorted(tp for tp in named if tp[0] not in subscription.topics)
            selected = "topics " + ", ".join(subscription.topics)
        if extra:
            option = role + initializer.json_option_suffix
            names = ", ".join(f"{t}-{p}" for t, p in extra)
            raise InvalidOptionError(
                option,
                names,
                f"only partitions the subscription selects ({subscription.kind.value}: {selected})",
            )


def _ending(opts: Mapping[str, str], streaming: bool) -> OffsetsInitializer | None:
    given = [k for k in ("endingoffsets", "endingoffsetsbytimestamp", "endingtimestamp") if k in opts]
    if streaming:
        if given:
            names = {
                "endingoffsets": "endingOffsets",
                "endingoffsetsbytimestamp": "endingOffsetsByTimestamp",
                "endingtimestamp": "endingTimestamp",
            }
            raise InvalidOptionError(
                names[given[0]], opts[given[0]], "not set: ending offsets are for batch queries only"
            )
        return None
    if "endingtimestamp" in opts:
        ms = _int(opts, "endingtimestamp", "endingTimestamp", 0)
        assert ms is not None
        return OffsetsInitializer.timestamp(ms, TimestampStrategy.LATEST, "ending")
    if "endingoffsetsbytimestamp" in opts:
        per = _partition_map(
            opts["endingoffsetsbytimestamp"],
            "endingOffsetsByTimestamp",
            'JSON such as {"topicA":{"0":1700000000000}}',
        )
        return OffsetsInitializer.timestamps(per, TimestampStrategy.LATEST, "ending")
    raw = opts.get("endingoffsets")
    value = (raw or "latest").strip()
    if value.lower() == "latest":
        return OffsetsInitializer.latest()
    expected = '\'latest\' or JSON such as {"topicA":{"0":23,"1":-1}} (-1 = latest; -2 is not allowed)'
    if value.lower() == "earliest" or not value.startswith("{"):
        raise InvalidOptionError("endingOffsets", raw, expected)
    offsets = _partition_map(value, "endingOffsets", expected)
    for (t, p), o in offsets.items():
        if o < LATEST:
            raise InvalidOptionError("endingOffsets", raw, f"{expected}; {t}-{p} has {o}")
    return OffsetsInitializer.specific(offsets, LATEST)


@dataclass(frozen=True, slots=True)
class KafkaSourceOptions:
    """Validated options of one query. ``client_config`` holds librdkafka settings (may hold secrets)."""

    bootstrap_servers: str
    subscription: Subscription
    starting: OffsetsInitializer
    ending: OffsetsInitializer | None
    streaming: bool
    client_config: dict[str, str] = field(repr=False)
    fail_on_data_loss: bool = True
    include_headers: bool = False
    group_id_prefix: str = DEFAULT_GROUP_ID_PREFIX
    group_id: str | None = None
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int | None = None
    max_bytes_per_trigger: int | None = None
    min_partitions: int | None = None
    commit_offsets_to_group: bool = False
    partition_discovery_interval_ms: int = 0
    consume_batch_size: int | None = None
    """``consumeBatchSize`` when set; each reader has its own default otherwise."""
    poll_timeout_ms: int = DEFAULT_POLL_TIMEOUT_MS
    read_committed: bool = False
    api_timeout_ms: int = DEFAULT_API_TIMEOUT_MS
    fetch_offset_retries: int = 3
    fetch_offset_retry_interval_ms: int = 1000
    max_records_per_partition: int | None = None
    max_records_per_packed_partition: int = DEFAULT_MAX_RECORDS_PER_PACKED_PARTITION
    """``maxRecordsPerPackedPartition``: 0 gives every offset range a task of its own, as Spark's source."""
    reader: KafkaReader = KafkaReader.PYTHON
    """The split reader (``kafka.reader``: never a client setting), resolved at ``load()``."""

    def __repr__(self) -> str:
        return (
            f"KafkaSourceOptions(bootstrap={self.bootstrap_servers!r}, subscription={self.subscription}, "
            f"starting={self.starting.describe()!r}, streaming={self.streaming}, "
            f"client_config={redact(self.client_config)})"
        )

    @classmethod
    def parse(cls, options: Mapping[str, str], streaming: bool) -> KafkaSourceOptions:
        """Validate ``options`` (case-insensitive names); raises ``InvalidOptionError`` naming the option."""
        for name, value in options.items():
            key = name.lower()
            if not key.startswith("kafka.") and key not in _SOURCE_OPTIONS and not is_format_option(key):
                raise InvalidOptionError(
                    name,
                    value,
                    "a 'kafka.*' client setting or one of " + ", ".join(sorted(_SOURCE_OPTIONS)),
                )
        lowered = {
            k.lower(): v for k, v in options.items() if v is not None and not is_format_option(k.lower())
        }
        reader = resolve_reader(lowered.pop("kafka.reader", None))
        opts = translate_java_settings(lowered)
        bootstrap = opts.get("kafka.bootstrap.servers", "").strip()
        if not bootstrap:
            raise InvalidOptionError("kafka.bootstrap.servers", None, "a comma-separated list of host:port")
        subscription = parse_subscription(opts)
        strategy_raw = opts.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
        if strategy_raw not in ("error", "latest"):
            raise InvalidOptionError("startingOffsetsByTimestampStrategy", strategy_raw, "error or latest")
        starting = _starting(opts, streaming, TimestampStrategy(strategy_raw))
        ending = _ending(opts, streaming)
        _check_start_not_after_end(opts)
        _check_maps_within_subscription(subscription, starting, ending)
        client = translate_client_options(opts)
        isolation = client.get("isolation.level", "read_uncommitted").lower()
        if isolation not in ("read_committed", "read_uncommitted"):
            raise InvalidOptionError("kafka.isolation.level", isolation, "read_committed or read_uncommitted")
        max_offsets = _int(opts, "maxoffsetspertrigger", "maxOffsetsPerTrigger", 1)
        min_offsets = _int(opts, "minoffsetspertrigger", "minOffsetsPerTrigger", 1)
        if min_offsets is not None and max_offsets is not None and min_offsets > max_offsets:
            raise InvalidOptionError(
                "minOffsetsPerTrigger", min_offsets, f"at most maxOffsetsPerTrigger ({max_offsets})"
            )
        delay = parse_duration_ms(opts, "maxtriggerdelay")
        if "maxtriggerdelay" in opts and delay is None:
            raise InvalidOptionError("maxTriggerDelay", opts["maxtriggerdelay"], "a duration such as 15m")
        group_id = client.pop("group.id", None)
        commit = _bool(opts, "commitoffsetstogroup", "commitOffsetsToGroup", False)
        if commit and not group_id:
            raise InvalidOptionError(
                "kafka.group.id", None, "a consumer group when commitOffsetsToGroup=true"
            )
        prefix = opts.get("groupidprefix", DEFAULT_GROUP_ID_PREFIX).strip()  # may be empty, as in Spark
        client.pop("bootstrap.servers", None)
        api_timeout = _int(opts, "kafka.default.api.timeout.ms", "kafka.default.api.timeout.ms", 1)
        client.pop("default.api.timeout.ms", None)
        parsed = cls(
            bootstrap_servers=bootstrap,
            subscription=subscription,
            starting=starting,
            ending=ending,
            streaming=streaming,
            client_config=client,
            fail_on_data_loss=_bool(opts, "failondataloss", "failOnDataLoss", True),
            include_headers=_bool(opts, "includeheaders", "includeHeaders", False),
            group_id_prefix=prefix,
            group_id=group_id,
            max_offsets_per_trigger=max_offsets,
            min_offsets_per_trigger=min_offsets,
            max_trigger_delay_ms=(delay if delay is not None else DEFAULT_MAX_TRIGGER_DELAY_MS)
            if min_offsets
            else delay,
            max_bytes_per_trigger=_int(opts, "maxbytespertrigger", "maxBytesPerTrigger", 1),
            min_partitions=_int(opts, "minpartitions", "minPartitions", 1),
            commit_offsets_to_group=commit,
            partition_discovery_interval_ms=_int(
                opts, "partitiondiscoveryintervalms", "partitionDiscoveryIntervalMs", 0
            )
            or 0,
            consume_batch_size=_int(opts, "consumebatchsize", "consumeBatchSize", 1),
            poll_timeout_ms=_int(opts, "kafkaconsumer.polltimeoutms", "kafkaConsumer.pollTimeoutMs", 1)
            or DEFAULT_POLL_TIMEOUT_MS,
            read_committed=isolation == "read_committed",
            api_timeout_ms=api_timeout or DEFAULT_API_TIMEOUT_MS,
            fetch_offset_retries=_default(
                _int(opts, "fetchoffset.numretries", "fetchOffset.numRetries", 0), 3
            ),
            fetch_offset_retry_interval_ms=_default(
                _int(opts, "fetchoffset.retryintervalms", "fetchOffset.retryIntervalMs", 0), 1000
            ),
            max_records_per_partition=_int(opts, "maxrecordsperpartition", "maxRecordsPerPartition", 1),
            max_records_per_packed_partition=_default(
                _int(opts, "maxrecordsperpackedpartition", "maxRecordsPerPackedPartition", 0),
                DEFAULT_MAX_RECORDS_PER_PACKED_PARTITION,
            ),
            reader=reader,
        )
        check_librdkafka(parsed.consumer_config(), producer=False)
        return parsed

    def read_limits(self) -> ReadLimitOptions:
        """Admission control for the bridge."""
        return ReadLimitOptions(
            max_records=self.max_offsets_per_trigger,
            max_bytes=self.max_bytes_per_trigger,
            min_records=self.min_offsets_per_trigger,
            max_trigger_delay_ms=self.max_trigger_delay_ms,
        )

    def base_client_config(self) -> dict[str, Any]:
        """librdkafka settings shared by every client of this query (never logged unredacted)."""
        return {"bootstrap.servers": self.bootstrap_servers, **self.client_config}

    def driver_client_config(self) -> dict[str, Any]:
        """Settings of the driver's metadata and offset clients: a batch read's are made for one
        planning and closed, so their first request must not wait out librdkafka's reconnect backoff
        (``RECONNECT_BACKOFF_MS``). A streaming query keeps its clients, and every other client keeps
        librdkafka's default: with a shorter backoff a client tries a broker that is down about twice
        as often (38 attempts/s against 20 at the default, measured against a closed port)."""
        conf = self.base_client_config()
        if not self.streaming:
            conf.setdefault("reconnect.backoff.ms", RECONNECT_BACKOFF_MS)
        return conf

    def consumer_config(
        self, bounded: bool = True, sizing: Mapping[str, int] | None = None
    ) -> dict[str, Any]:
        """Settings of the executors' consumers: assign only, never commit, errors on lost offsets;
        ``bounded``: for splits with a stopping offset (``BOUNDED_FETCH_WAIT_MAX_MS``);
        ``sizing``: a task's fetch size and prefetch depth (``fetch_sizing.fetch_settings``), each
        unless the user set it."""
        conf = self.base_client_config()
        conf.update(
            {
                "group.id": self.group_id or f"{self.group_id_prefix}-executor",
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "error",
                "enable.partition.eof": True,
            }
        )
        # the Java client (and so Spark) defaults to read_uncommitted; librdkafka to read_committed
        conf["isolation.level"] = "read_committed" if self.read_committed else "read_uncommitted"
        conf.setdefault("log.connection.close", False)
        # some brokers (noida-db) ignore fetch.max.bytes and answer a big backlog in one response
        conf.setdefault("receive.message.max.bytes", 1_000_000_000)
        conf.setdefault("fetch.max.bytes", 52_428_800)
        for key, value in (sizing or {}).items():
            conf.setdefault(key, value)
        conf.setdefault("max.partition.fetch.bytes", MAX_FETCH_BYTES)
        conf.setdefault("queued.max.messages.kbytes", 262_144)
        conf.setdefault("fetch.queue.backoff.ms", FETCH_QUEUE_BACKOFF_MS)
        # a pooled consumer's last fetch of its previous split stays parked at the broker for this
        # long when no data follows, and the broker answers that connection in order: the next
        # task's first fetch waited ~0.5 s (librdkafka's default) behind it on real Kafka.
        wait = BOUNDED_FETCH_WAIT_MAX_MS if bounded else EXECUTOR_FETCH_WAIT_MAX_MS
        conf.setdefault("fetch.wait.max.ms", wait)
        return conf

    def describe(self) -> str:
        """Secret-free description."""
        return repr(self)


def redacted_value(key: str, value: str) -> str:
    """``value`` or ``<redacted>`` for secret settings."""
    from connectors.kafka.client_config import is_secret

    return REDACTED if is_secret(key) else value
