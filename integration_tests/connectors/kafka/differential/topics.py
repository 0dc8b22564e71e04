"""Topic shapes for the differential tests, built once per shape and reused across examples.

A shape says how many records each partition holds, which keys are null, whether records carry
headers and set timestamps, and whether the log is compacted or trimmed at its start (records
removed below the log start offset, as retention removes them). Reads never change a topic, so
every example drawing the same shape reads the same topic: creating topics is the expensive part
of an example, and the strategies draw from few enough shapes that most examples reuse one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from hypothesis import strategies as st

from sparkflow_testing.kafka.broker import KafkaBroker

__all__ = ["BASE_TIMESTAMP_MS", "Log", "Topic", "TopicShape", "TopicStore", "shapes"]

BASE_TIMESTAMP_MS = 1_700_000_000_000
"""Set timestamps start here (2023-11-14), one second apart per offset, partitions interleaved."""


class Log(Enum):
    """What happened to the log after it was written."""

    PLAIN = "plain"
    TRIMMED = "trimmed"  # the first records of each partition deleted (log start offset moved)
    COMPACTED = "compacted"  # cleanup.policy=compact over repeated keys


@dataclass(frozen=True, slots=True)
class TopicShape:
    """Records per partition and what they carry."""

    counts: tuple[int, ...]
    null_keys: bool = False
    headers: bool = False
    timestamps: bool = True
    log: Log = Log.PLAIN

    @property
    def partitions(self) -> int:  # noqa: D102
        return len(self.counts)


@dataclass(slots=True)
class Topic:
    """A topic of a shape, as written: its name, log start and end offset per partition."""

    name: str
    shape: TopicShape
    starts: dict[int, int] = field(default_factory=dict)
    ends: dict[int, int] = field(default_factory=dict)

    def timestamp_ms(self, partition: int, offset: int) -> int:
        """The timestamp the record at ``offset`` of ``partition`` was written with (set timestamps)."""
        return BASE_TIMESTAMP_MS + offset * 1000 + partition


_LAYOUTS = (
    (0,),
    (5,),
    (40,),
    (0, 0),
    (30, 1),
    (1, 0, 50),
    (12, 12, 12),
    (200, 2, 0, 7),
)
"""Partition layouts: empty topics, one record, uneven and nearly empty partitions."""


def shapes() -> st.SearchStrategy[TopicShape]:
    """Topic shapes, from a small set so examples share topics."""
    plain = st.builds(
        TopicShape,
        counts=st.sampled_from(_LAYOUTS),
        null_keys=st.booleans(),
        headers=st.booleans(),
        timestamps=st.booleans(),
    )
    special = st.builds(
        TopicShape,
        counts=st.sampled_from(((30, 1), (12, 12, 12))),
        null_keys=st.just(False),
        headers=st.just(False),
        timestamps=st.just(True),
        log=st.sampled_from((Log.TRIMMED, Log.COMPACTED)),
    )
    return st.one_of(plain, plain, plain, special)


def _headers(partition: int, i: int) -> list[tuple[str, bytes | None]] | None:
    if i % 4 == 0:
        return None  # no headers at all: Spark's column is null there
    if i % 4 == 1:
        return [("h", f"{partition}-{i}".encode())]
    return [("dup", b"a"), ("dup", b"b"), ("empty", b""), ("none", None)]


class TopicStore:
    """Topics by shape on one broker: the first example of a shape creates and fills its topic."""

    def __init__(self, broker: KafkaBroker) -> None:
        self.broker = broker
        self._topics: dict[TopicShape, Topic] = {}
        self.created = 0

    def get(self, shape: TopicShape) -> Topic:
        """The topic of ``shape`` (created and written on first use)."""
        topic = self._topics.get(shape)
        if topic is None:
            topic = self._create(shape)
            self._topics[shape] = topic
            self.created += 1
        return topic

    def _create(self, shape: TopicShape) -> Topic:
        config: dict[str, str] = {}
        if shape.log is Log.COMPACTED:
            config = {
                "cleanup.policy": "compact",
                "segment.ms": "100",
                "min.cleanable.dirty.ratio": "0.01",
                "delete.retention.ms": "100",
                "min.compaction.lag.ms": "0",
            }
        name = self.broker.create_topic(shape.partitions, **config)
        for p, n in enumerate(shape.counts):
            if n:
                self._produce(name, shape, p, n)
        topic = Topic(name, shape)
        if shape.log is Log.TRIMMED:
            self._trim(name, shape)
        if shape.log is Log.COMPACTED:
            self._compact(name, shape)
        topic.starts, topic.ends = self._watermarks(name, shape.partitions)
        return topic

    def _produce(self, name: str, shape: TopicShape, p: int, n: int) -> None:
        if shape.log is Log.COMPACTED:
            keys: list[bytes | None] = [f"k{i % 4}".encode() for i in range(n)]  # repeated keys
        else:
            keys = [None if shape.null_keys and i % 3 == 0 else f"k{p}-{i}".encode() for i in range(n)]
        self.broker.produce(
            name,
            [f"v{p}-{i}".encode() for i in range(n)],
            partition=p,
            keys=keys,
            headers=[_headers(p, i) for i in range(n)] if shape.headers else None,
            timestamps=[BASE_TIMESTAMP_MS + i * 1000 + p for i in range(n)] if shape.timestamps else None,
        )

    def _trim(self, name: str, shape: TopicShape) -> None:
        from confluent_kafka import TopicPartition

        admin = self.broker.admin()
        cut = [TopicPartition(name, p, n // 3) for p, n in enumerate(shape.counts) if n // 3 > 0]
        if cut:
            for f in admin.delete_records(cut).values():
                f.result(timeout=30)

    def _compact(self, name: str, shape: TopicShape, timeout_s: float = 60.0) -> None:
        """Roll the segments (a later record after ``segment.ms``) and wait until the cleaner ran."""
        time.sleep(0.3)
        for p, n in enumerate(shape.counts):
            if n:
                self.broker.produce(
                    name, [b"roll"], partition=p, keys=[b"roll"], timestamps=[BASE_TIMESTAMP_MS + 10**6]
                )
        deadline = time.monotonic() + timeout_s
        want = sum(1 for n in shape.counts if n)
        while time.monotonic() < deadline:
            held = self.broker.log_contents(name, quiet_s=0.5)
            if sum(1 for p, recs in held.items() if recs and len(recs) < recs[-1][0] + 1) >= want:
                return
            time.sleep(1.0)
        # compaction is the broker's business: a log the cleaner has not reached yet is still a log

    def _watermarks(self, name: str, partitions: int) -> tuple[dict[int, int], dict[int, int]]:
        from confluent_kafka import TopicPartition

        c = self.broker.consumer()
        try:
            c.list_topics(name, timeout=10)
            marks = {
                p: c.get_watermark_offsets(TopicPartition(name, p), timeout=10) for p in range(partitions)
            }
        finally:
            c.close()
        return {p: lo for p, (lo, _hi) in marks.items()}, {p: hi for p, (_lo, hi) in marks.items()}


def describe(topic: Topic) -> dict[str, Any]:
    """For failure messages."""
    return {"topic": topic.name, "shape": topic.shape, "starts": topic.starts, "ends": topic.ends}
