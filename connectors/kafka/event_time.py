"""``KafkaEventTimeLookup``: the driver's record-time lookups for the event-time cut.

Event time is the record ``timestamp`` (CreateTime or LogAppendTime, as the topic stores it):

* a position by time is ListOffsets by timestamp, one request for every partition (Kafka answers
  the earliest offset whose timestamp is at or after the time, so every record before it is older);
* a partition's head time is ListOffsets ``max_timestamp``, one request for every partition;
* the time at a position needs the record itself: one consumer fetches it (first batch of a query
  and late-split reports only).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from connector_base.spark import Position
from connectors.kafka.cluster_client import KafkaClusterClient
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.split import KafkaPartitionSplit

__all__ = ["KAFKA_EVENT_TIME_COLUMN", "KafkaEventTimeLookup"]

LOG = logging.getLogger(__name__)

KAFKA_EVENT_TIME_COLUMN = "timestamp"
"""The only event time the driver can see without parsing values."""
FETCH_TIMEOUT_S = 10.0


class KafkaEventTimeLookup:
    """Answers ``SplitPlanner``'s event-time hooks for ``KafkaSplitPlanner``.

    Threading: the driver's stream-reader thread only.
    """

    def __init__(self, options: KafkaSourceOptions, cluster: Callable[[], KafkaClusterClient]) -> None:
        self._options = options
        self._cluster = cluster

    def positions_at_time(
        self, ranges: Mapping[str, tuple[KafkaPartitionSplit, Position, Position]], t_ms: int
    ) -> dict[str, Position]:
        """The first offset in ``[start, end]`` whose timestamp is ``>= t_ms`` (``end`` if none)."""
        tps = {sid: (s.topic, s.partition) for sid, (s, _a, _e) in ranges.items()}
        found = self._cluster().for_times({tp: t_ms for tp in tps.values()}) if tps else {}
        out: dict[str, Position] = {}
        for sid, (_s, start, end) in ranges.items():
            first = found.get(tps[sid])
            out[sid] = int(end) if first is None else min(max(first, int(start)), int(end))
        return out

    def head_times(self, ends: Mapping[str, tuple[KafkaPartitionSplit, Position]]) -> dict[str, int | None]:
        """The largest record timestamp of each partition (``None`` when it holds no record)."""
        tps = {sid: (s.topic, s.partition) for sid, (s, _e) in ends.items()}
        heads = self._cluster().max_timestamps(list(set(tps.values()))) if tps else {}
        return {sid: heads.get(tp) for sid, tp in tps.items()}

    def times_at(
        self, positions: Mapping[str, tuple[KafkaPartitionSplit, Position]]
    ) -> dict[str, int | None]:
        """The timestamp of the record at each position (the next one after a control record)."""
        from confluent_kafka import Consumer, KafkaError
        from confluent_kafka import TopicPartition as TP

        out: dict[str, int | None] = {sid: None for sid in positions}
        wanted = {(s.topic, s.partition): (sid, int(pos)) for sid, (s, pos) in positions.items()}
        if not wanted:
            return out
        conf: dict[str, Any] = self._options.consumer_config()
        conf["group.id"] = f"{self._options.group_id_prefix}-event-time"
        consumer = Consumer(conf)
        try:
            consumer.assign([TP(t, p, pos) for (t, p), (_sid, pos) in wanted.items()])
            deadline = time.monotonic() + FETCH_TIMEOUT_S
            while wanted and time.monotonic() < deadline:
                for m in consumer.consume(len(wanted), timeout=0.5):
                    tp = (m.topic(), m.partition())
                    if tp not in wanted:
                        continue
                    err = m.error()
                    if err is not None and err.code() != KafkaError._PARTITION_EOF:
                        continue
                    sid, pos = wanted[tp]
                    if err is None and m.offset() < pos:
                        continue
                    out[sid] = None if err is not None else int(m.timestamp()[1])
                    del wanted[tp]
            if wanted:
                LOG.warning("no record time for %d partitions within %.0f s", len(wanted), FETCH_TIMEOUT_S)
            return out
        finally:
            consumer.close()
