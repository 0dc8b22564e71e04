"""Source options of Spark's Kafka source, valid and invalid, drawn with hypothesis for one topic.

Every option of ``KafkaSourceProvider`` that changes what a read returns or when it fails is here:
the subscription (``subscribe``, ``subscribePattern``, ``assign``, including topics and partitions
that do not exist and two subscriptions at once), every form of ``startingOffsets`` /
``endingOffsets`` (keywords in any case, JSON with -2/-1, offsets inside, beyond and below the log,
partitions and topics not subscribed), the timestamp options and their strategy, the per-trigger
limits, ``maxTriggerDelay`` in the duration syntax of Spark's ``JavaUtils.timeStringAs`` (a number
with an optional unit ``us ms s m min h d``, default ms), ``failOnDataLoss``, ``includeHeaders``,
``minPartitions``, ``maxRecordsPerPartition`` and the group id options. Values a valid pipeline
would use are drawn more often than invalid ones; each drawn option that may be invalid is a
*suspect*, which an error must name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from integration_tests.connectors.kafka.differential.topics import BASE_TIMESTAMP_MS, Topic

__all__ = ["Case", "source_options"]

MISSING_TOPIC = "diff-no-such-topic"


@dataclass
class Case:
    """One example's options and the options whose value may be invalid."""

    options: dict[str, str] = field(default_factory=dict)
    suspects: list[str] = field(default_factory=list)

    def put(self, name: str, value: str, suspect: bool = True) -> None:  # noqa: D102
        self.options[name] = value
        if suspect:
            self.suspects.append(name)


def _offsets_json(topic: Topic, per_partition: dict[int, int], extra: dict[str, Any] | None = None) -> str:
    body: dict[str, Any] = {topic.name: {str(p): o for p, o in per_partition.items()}}
    body.update(extra or {})
    return json.dumps(body)


@st.composite
def _subscription(draw: Any, case: Case, topic: Topic, bad: bool) -> None:
    name = topic.name
    partitions = list(range(topic.shape.partitions))
    kind = "bad" if bad else draw(st.sampled_from(["subscribe"] * 3 + ["subscribePattern", "assign"]))
    if kind == "subscribe":
        value = draw(st.sampled_from([name, f" {name} ", f"{name},{MISSING_TOPIC}", f"{name},,"]))
        case.put("subscribe", value, suspect=False)
    elif kind == "subscribePattern":
        value = draw(st.sampled_from([name.replace("-", "\\-"), name[:-3] + ".*", f"{name}|{MISSING_TOPIC}"]))
        case.put("subscribePattern", value, suspect=False)
    elif kind == "assign":
        chosen = draw(st.lists(st.sampled_from(partitions), min_size=1, unique=True)) if partitions else [0]
        case.put("assign", json.dumps({name: sorted(chosen)}), suspect=False)
    else:
        which = draw(
            st.sampled_from(
                [
                    "two",
                    "empty-subscribe",
                    "empty-pattern",
                    "bad-regex",
                    "bad-assign",
                    "missing-partition",
                    "missing-topic",
                    "none",
                ]
            )
        )
        if which == "two":
            case.put("subscribe", name)
            case.put("assign", json.dumps({name: [0]}))
        elif which == "empty-subscribe":
            case.put("subscribe", " ")
        elif which == "empty-pattern":
            case.put("subscribePattern", "")
        elif which == "bad-regex":
            case.put("subscribePattern", "[unclosed")
        elif which == "bad-assign":
            case.put("assign", "{" + name)
        elif which == "missing-partition":
            case.put("assign", json.dumps({name: [0, 99]}))
        elif which == "missing-topic":
            case.put("subscribe", MISSING_TOPIC)
        else:
            case.suspects += ["subscribe", "subscribePattern", "assign"]


def _offset_values(topic: Topic, p: int, symbol: int, edges: bool) -> list[int]:
    """Offsets for a JSON map: the role's symbol (-2 starting, -1 ending), offsets in the log, and
    with ``edges`` also ones beyond its end and below its start (a trimmed log's lost records)."""
    start, end = topic.starts.get(p, 0), topic.ends.get(p, 0)
    values = {symbol, start, (start + end) // 2, end}
    if edges:
        values |= {end + 5, max(0, start - 1)}
    return sorted(values)


@st.composite
def _offsets(draw: Any, case: Case, topic: Topic, option: str, bad: bool, streaming: bool) -> None:
    starting = option.startswith("starting")
    keywords = ["earliest", "latest"] if streaming else (["earliest"] if starting else ["latest"])
    kind = "bad" if bad else draw(st.sampled_from([*keywords, "json", "json", "json", "partial"]))
    if kind in ("earliest", "latest"):
        case.put(option, draw(st.sampled_from([kind, kind.upper(), f" {kind.capitalize()} "])))
        return
    symbol = -2 if starting else -1
    edges = draw(st.integers(0, 4)) == 0
    parts = list(range(topic.shape.partitions))
    if kind == "json":
        offsets = {p: draw(st.sampled_from(_offset_values(topic, p, symbol, edges))) for p in parts}
        case.put(option, _offsets_json(topic, offsets))
    elif kind == "partial":
        chosen = draw(st.lists(st.sampled_from(parts), max_size=len(parts), unique=True)) if parts else []
        extra = draw(st.sampled_from([{}, {}, {MISSING_TOPIC: {"0": 0}}]))
        offsets = {p: draw(st.sampled_from(_offset_values(topic, p, symbol, edges))) for p in chosen}
        if draw(st.integers(0, 3)) == 0:
            offsets[topic.shape.partitions + 3] = 0  # a partition the topic does not have
        case.put(option, _offsets_json(topic, offsets, extra))
    else:
        wrong_mode = (
            []
            if streaming
            else (
                [json.dumps({topic.name: {"0": -1}}), "latest"]
                if starting
                else [json.dumps({topic.name: {"0": -2}}), "earliest"]
            )
        )
        case.put(
            option,
            draw(st.sampled_from(["{", "[]", "soon", json.dumps({topic.name: {"0": "x"}}), *wrong_mode])),
        )


def _timestamps(topic: Topic) -> list[int]:
    last = max(topic.shape.counts or (0,))
    return sorted(
        {
            0,
            BASE_TIMESTAMP_MS - 1,
            BASE_TIMESTAMP_MS,
            BASE_TIMESTAMP_MS + 1500,
            BASE_TIMESTAMP_MS + (last // 2) * 1000 + 1,
            BASE_TIMESTAMP_MS + last * 1000 + 10**7,
        }
    )


@st.composite
def _by_timestamp(draw: Any, case: Case, topic: Topic, prefix: str, bad: bool) -> None:
    kind = "bad" if bad else draw(st.sampled_from(["global", "per-partition"]))
    values = _timestamps(topic)
    if kind == "global":
        case.put(f"{prefix}Timestamp", str(draw(st.sampled_from(values))))
    elif kind == "per-partition":
        parts = list(range(topic.shape.partitions))
        chosen = draw(st.lists(st.sampled_from(parts), min_size=1, unique=True)) if parts else []
        body = {topic.name: {str(p): draw(st.sampled_from(values)) for p in chosen}}
        case.put(f"{prefix}OffsetsByTimestamp", json.dumps(body))
    else:
        option = draw(st.sampled_from([f"{prefix}Timestamp", f"{prefix}OffsetsByTimestamp"]))
        case.put(option, draw(st.sampled_from(["yesterday", "-5", "{"])))


_DURATIONS = [
    "0",
    "100",
    "250ms",
    "1s",
    "2S",
    "1m",
    "1min",
    "15m",
    "1h",
    "1d",
    "500us",
    " 3s ",
    "-1",
    "2 seconds",
    "soon",
    "1.5s",
]


def _max_offsets(topic: Topic) -> list[str]:
    """Limits that cut the topic into at most about five micro-batches (an example stays cheap)."""
    total = sum(topic.shape.counts)
    valid = {max(1, -(-total // k)) for k in (1, 2, 3, 5)} | ({1, 3} if total <= 10 else set())
    return [str(v) for v in sorted(valid)]


_SIMPLE: dict[str, tuple[list[str], list[str]]] = {
    # option: (valid values, invalid values)
    "minOffsetsPerTrigger": (["1", "5", "50"], ["0", "x"]),
    "maxTriggerDelay": (_DURATIONS[:13], _DURATIONS[13:]),
    "failOnDataLoss": (["true", "false", "FALSE"], ["maybe"]),
    "includeHeaders": (["true", "false", "True"], ["yes"]),
    "minPartitions": (["1", "3", "10"], ["0", "-1", "x"]),
    "maxRecordsPerPartition": (["1", "5", "100"], ["0", "x"]),
    "kafka.group.id": (["diff-group"], []),
    "groupIdPrefix": (["diff-prefix", ""], []),
    "startingOffsetsByTimestampStrategy": (["error", "latest", "LATEST"], ["bogus"]),
    "maxOffsetsPerTrigger": ([], ["0", "-5", "x"]),
}


@st.composite
def source_options(draw: Any, topic: Topic, streaming: bool) -> Case:
    """Options for one read of ``topic`` (batch or streaming), with their suspects.

    Three examples in four have only valid values (which may still fail on the data: an offset
    beyond the log, a timestamp no record reaches); the fourth has one option with an invalid value
    (the subscription, an offsets or timestamp option, a simple one, or an ending option in a stream).
    """
    case = Case()
    bad = draw(st.sampled_from([""] * 12 + ["subscription", "offsets", "timestamp", "simple"]))
    draw(_subscription(case, topic, bad == "subscription"))
    if bad == "offsets" or draw(st.booleans()):
        draw(_offsets(case, topic, "startingOffsets", bad == "offsets", streaming))
    if bad == "timestamp" or draw(st.integers(0, 3)) == 0:
        draw(_by_timestamp(case, topic, "starting", bad == "timestamp"))
        if draw(st.booleans()):
            case.put(
                "startingOffsetsByTimestampStrategy",
                draw(st.sampled_from(_SIMPLE["startingOffsetsByTimestampStrategy"][0])),
            )
    if not streaming or (bad == "simple" and draw(st.booleans())):  # ending options: batch only
        if draw(st.booleans()):
            draw(_offsets(case, topic, "endingOffsets", False, streaming))
        if draw(st.integers(0, 3)) == 0:
            draw(_by_timestamp(case, topic, "ending", False))
    if streaming or draw(st.integers(0, 4)) == 0:
        if draw(st.booleans()):
            case.put("maxOffsetsPerTrigger", draw(st.sampled_from(_max_offsets(topic))))
        if draw(st.integers(0, 3)) == 0:
            case.put("minOffsetsPerTrigger", draw(st.sampled_from(_SIMPLE["minOffsetsPerTrigger"][0])))
            if draw(st.booleans()):
                case.put("maxTriggerDelay", draw(st.sampled_from(_SIMPLE["maxTriggerDelay"][0])))
    for name in (
        "failOnDataLoss",
        "includeHeaders",
        "minPartitions",
        "maxRecordsPerPartition",
        "kafka.group.id",
        "groupIdPrefix",
    ):
        if draw(st.integers(0, 3)) == 0:
            case.put(name, draw(st.sampled_from(_SIMPLE[name][0])), suspect=False)
    if bad == "simple":
        name = draw(st.sampled_from(sorted(n for n, (_v, invalid) in _SIMPLE.items() if invalid)))
        case.put(name, draw(st.sampled_from(_SIMPLE[name][1])))
    return case
