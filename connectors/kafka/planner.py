"""``KafkaSplitPlanner``: plans ``[start, end)`` offset ranges per partition on the Spark driver."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from typing_extensions import override

from connector_base import ConnectorError, DataLossError
from connector_base.spark import Backlog, Position, RangePacking, SplitPlanner
from connector_base.spark.filters import ColumnFilter
from connectors.kafka.cluster_client import KafkaClusterClient
from connectors.kafka.enumerator import KafkaEnumeratorState
from connectors.kafka.event_time import KafkaEventTimeLookup
from connectors.kafka.filter_pushdown import KafkaFilters
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.positions import TopicPartition
from connectors.kafka.reachability import OutageClock
from connectors.kafka.restore_check import check_kafka_restore
from connectors.kafka.split import KafkaPartitionSplit

__all__ = ["KafkaSplitPlanner"]

LOG = logging.getLogger(__name__)

SAMPLE_RECORDS = 200
SAMPLE_REFRESH_S = 300.0
RECORD_OVERHEAD_BYTES = 70
"""Per-record bytes beyond key and value in Kafka's v2 record batches (offsets, lengths, timestamp)."""
PACKED_TASK_OPEN_COST_RECORDS = 8_192
"""A Spark task's fixed cost in records when small ranges are packed (``maxRecordsPerPackedPartition``).

A Python read task costs about 15-25 ms before its first record (the worker's round trip, the
reader's set-up, a pooled consumer's assign and first fetch) against about a millisecond for a JVM
task, and the compiled reader reads ~440k records/s per core: 8,192 records is about that long."""


class KafkaSplitPlanner(SplitPlanner[KafkaPartitionSplit]):
    """Latest offsets in one batched request; admission control by record count or estimated bytes.

    Under ``read_committed`` the end is the last stable offset. ``minPartitions`` splits large ranges
    into several Spark tasks (as Spark's ``KafkaOffsetRangeCalculator``); small ranges share a task
    (``packing``, ``maxRecordsPerPackedPartition``), where Spark's source runs one task per range.
    Data loss seen here (a deleted partition, a log that now ends below the position) fails the
    query or is logged, as ``failOnDataLoss`` says; records removed below the position are found by
    the executors.

    Threading: the driver's stream-reader thread only.
    """

    def __init__(
        self,
        options: KafkaSourceOptions,
        outage: OutageClock | None = None,
        client_factory: Callable[[], KafkaClusterClient] | None = None,
    ) -> None:
        self.options = options
        # the query's driver client, shared with the enumerator's discovery (``KafkaSource``)
        self._client_factory = client_factory or (lambda: KafkaClusterClient(options))
        self._client: KafkaClusterClient | None = None
        self._gone: set[TopicPartition] = set()
        self._avg_bytes: dict[TopicPartition, tuple[float, float]] = {}
        self._plan_sizes: list[int] = []
        self._group_committed: dict[TopicPartition, int] = {}
        # shared with the enumerator's partition discovery: one clock per query (``KafkaSource``)
        self._outage = outage or OutageClock(options)
        self._filters: KafkaFilters | None = None
        self._starts: dict[TopicPartition, int] = {}
        self._times = KafkaEventTimeLookup(options, self._cluster)

    @override
    def open(self) -> None:
        self._client = self._client_factory()
        self._client.first_contact()

    @override
    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def check_restored(self, enumerator_state: KafkaEnumeratorState, splits: Mapping[str, Any]) -> set[str]:
        """A restored offset must hold only partitions the options select (see restore_check)."""
        return check_kafka_restore(self.options, enumerator_state, splits)

    def _cluster(self) -> KafkaClusterClient:
        if self._client is None:
            self.open()
        assert self._client is not None
        return self._client

    @override
    def start_position(self, split: KafkaPartitionSplit) -> Position:
        return split.starting_offset

    @override
    def push_filters(self, filters: Sequence[ColumnFilter]) -> None:
        self._filters = KafkaFilters.of(filters)

    @override
    def end_positions(
        self, splits: Mapping[str, tuple[KafkaPartitionSplit, Position]]
    ) -> dict[str, Position]:
        if self._filters is None:
            return self._end_positions(splits)
        kept = {sid: v for sid, v in splits.items() if self._filters.keeps((v[0].topic, v[0].partition))}
        ends: dict[str, Position] = {sid: pos for sid, (_s, pos) in splits.items()}
        ends.update(self._end_positions(kept) if kept else {})
        ranges = {(s.topic, s.partition): (int(pos), int(ends[sid])) for sid, (s, pos) in kept.items()}
        cluster = self._cluster()
        topics = sorted({tp[0] for tp in ranges})
        bounds = self._filters.bounds(
            ranges, cluster, cluster.log_append_time_topics(topics) if self._filters.until_ms else set()
        )
        for sid, (s, pos) in kept.items():
            tp = (s.topic, s.partition)
            start, end = bounds[tp]
            self._starts[tp] = start
            ends[sid] = end if start < end else pos
        sizes = [int(ends[sid]) - self._starts[(s.topic, s.partition)] for sid, (s, _p) in kept.items()]
        self._plan_sizes = [n for n in sizes if n > 0]
        LOG.info(
            "pushed filters %s: %d of %d partitions to read, %d records",
            self._filters.applied,
            len(self._plan_sizes),
            len(splits),
            sum(self._plan_sizes),
        )
        return ends

    def _end_positions(
        self, splits: Mapping[str, tuple[KafkaPartitionSplit, Position]]
    ) -> dict[str, Position]:
        ends: dict[str, Position] = {}
        unbounded = {sid: (s, int(pos)) for sid, (s, pos) in splits.items() if not s.is_bounded}
        for sid, (s, _pos) in splits.items():
            if s.is_bounded:
                ends[sid] = s.stopping_offset
        if unbounded:
            cluster = self._cluster()
            started = time.monotonic()
            try:
                existing = cluster.partitions() or {}
            except ConnectorError as e:
                # the cluster does not answer (a broker restart): plan nothing new this trigger,
                # unless the outage has outlasted its bound
                self._outage.failed(e, started)
                LOG.warning("cannot reach the cluster, no new data planned this trigger: %s", e)
                return {sid: pos for sid, (_s, pos) in splits.items()}
            live = {}
            for sid, (s, pos) in unbounded.items():
                tp = (s.topic, s.partition)
                if s.partition not in existing.get(s.topic, ()):
                    self._lost(tp, pos, None, "the partition no longer exists")
                    ends[sid] = pos
                else:
                    live[sid] = (tp, pos)
            try:
                latest = cluster.latest([tp for tp, _ in live.values()]) if live else {}
            except ConnectorError as e:
                self._outage.failed(e, started)
                LOG.warning("cannot look up the latest offsets, no new data planned this trigger: %s", e)
                return {sid: pos for sid, (_s, pos) in splits.items()}
            self._outage.answered()
            self._commit_planned_from(splits)
            for sid, (tp, pos) in live.items():
                end = latest[tp]
                if end < pos:
                    self._lost(tp, pos, end, f"the log now ends at offset {end}")
                    end = pos
                ends[sid] = end
        else:
            self._commit_planned_from(splits)
        self._plan_sizes = [
            int(ends[sid]) - int(pos) for sid, (_s, pos) in splits.items() if int(ends[sid]) > int(pos)
        ]
        return ends

    def _commit_planned_from(self, splits: Mapping[str, tuple[KafkaPartitionSplit, Position]]) -> None:
        """With ``commitOffsetsToGroup``, commit where this micro-batch starts.

        Spark plans a micro-batch from where the last committed one ended: those records are
        processed, so lag tools see them now rather than one trigger later (``commit(end)``). Done
        once the cluster has answered this trigger's lookups, so a trigger during an outage spends
        no wait on a commit.
        """
        if self.options.commit_offsets_to_group and self.options.streaming and splits:
            self._commit_group({(s.topic, s.partition): int(pos) for s, pos in splits.values()})

    def _lost(self, tp: TopicPartition, pos: int, end: int | None, why: str) -> None:
        message = (
            f"data loss in topic {tp[0]} partition {tp[1]}: offsets from {pos} on are no longer "
            f"available ({why})"
        )
        if self.options.fail_on_data_loss:
            raise DataLossError(message + ". Set failOnDataLoss=false to log such losses and continue.")
        if tp not in self._gone:
            LOG.warning("%s; continuing (failOnDataLoss=false)", message)
        if end is None:
            self._gone.add(tp)

    # --- admission control ----------------------------------------------------------------------
    def _record_bytes(self, split: KafkaPartitionSplit, start: int, end: int) -> float:
        tp = (split.topic, split.partition)
        cached = self._avg_bytes.get(tp)
        now = time.monotonic()
        if cached is not None and now - cached[1] < SAMPLE_REFRESH_S:
            return cached[0]
        avg = self._sample(split, start, end)
        if avg is None:
            return cached[0] if cached else 1024.0
        self._avg_bytes[tp] = (avg, now)
        return avg

    def _sample(self, split: KafkaPartitionSplit, start: int, end: int) -> float | None:
        """The mean size of up to ``SAMPLE_RECORDS`` records just before ``end``."""
        from confluent_kafka import Consumer
        from confluent_kafka import TopicPartition as TP

        conf = self.options.consumer_config()
        conf["group.id"] = f"{self.options.group_id_prefix}-sampler"
        consumer = Consumer(conf)
        try:
            consumer.assign([TP(split.topic, split.partition, max(start, end - SAMPLE_RECORDS))])
            sizes: list[int] = []
            deadline = time.monotonic() + 5.0
            while len(sizes) < min(SAMPLE_RECORDS, end - start) and time.monotonic() < deadline:
                for m in consumer.consume(SAMPLE_RECORDS, timeout=0.5):
                    if m.error() is None and m.offset() < end:
                        h = m.headers() or []
                        sizes.append(
                            len(m.key() or b"")
                            + len(m.value() or b"")
                            + RECORD_OVERHEAD_BYTES
                            + sum(len(k) + len(v or b"") for k, v in h)
                        )
            return sum(sizes) / len(sizes) if sizes else None
        finally:
            consumer.close()

    @override
    def packing(self, split: KafkaPartitionSplit) -> RangePacking | None:
        """Ranges share a task up to ``maxRecordsPerPackedPartition`` records (each counting
        ``PACKED_TASK_OPEN_COST_RECORDS`` more); 0: one task per range, as Spark's source.

        One consumer reads a task's partitions together (one fetch asks for all of a broker's), so a
        micro-batch of six small ranges on two cores runs as two tasks instead of three waves of two:
        the read stage of ``benchmarks/kafka_latency.py``'s micro-batches took 64-83 ms instead of
        120-143 ms (20k records/s over 6 partitions, local[2], real Kafka 4.1.1).
        """
        target = self.options.max_records_per_packed_partition
        return RangePacking(target, PACKED_TASK_OPEN_COST_RECORDS, "records") if target else None

    @override
    def backlog(self, split: KafkaPartitionSplit, start: Position, end: Position) -> Backlog:
        records = max(0, int(end) - int(start))
        size = None
        if self.options.max_bytes_per_trigger is not None and records:
            size = int(records * self._record_bytes(split, int(start), int(end)))
        return Backlog(records=records, bytes=size if records else 0)

    @override
    def cut(
        self,
        split: KafkaPartitionSplit,
        start: Position,
        end: Position,
        max_records: int | None,
        max_bytes: int | None,
    ) -> Position:
        s, e = int(start), int(end)
        upto = e
        if max_records is not None:
            upto = min(upto, s + max_records)
        if max_bytes is not None and e > s:
            per = self._record_bytes(split, s, e)
            upto = min(upto, s + int(max_bytes // max(per, 1.0)))
        return max(s, upto)

    @override
    def smallest_cut(self, split: KafkaPartitionSplit, start: Position, end: Position) -> Position:
        return min(int(end), int(start) + 1)  # one record

    def time_lag_ms(
        self, ranges: Mapping[str, tuple[KafkaPartitionSplit, Position, Position]], probes_ms: Sequence[int]
    ) -> dict[str, int | None]:
        """``ReportsTimeLag`` (backlog.py): for each probe P, one ListOffsets by timestamp at now - P.

        A partition is behind by at least P when the first offset with a timestamp at or after
        now - P lies beyond its position (or none does): its next record is older than that.
        """
        lagging = {
            sid: ((s.topic, s.partition), int(a)) for sid, (s, a, e) in ranges.items() if int(e) > int(a)
        }
        out: dict[str, int | None] = {sid: 0 for sid in ranges if sid not in lagging}
        if not probes_ms or not lagging:
            return {**out, **{sid: None for sid in lagging}}
        now = int(time.time() * 1000)
        for probe in sorted(probes_ms):
            try:
                found = self._cluster().for_times({tp: now - probe for tp, _pos in lagging.values()})
            except ConnectorError as e:
                LOG.warning("cannot look up offsets by timestamp for the backlog lag: %s", e)
                return {**out, **{sid: out.get(sid) for sid in lagging}}
            for sid, (tp, pos) in lagging.items():
                first = found.get(tp)
                out[sid] = probe if first is None or first > pos else out.get(sid, 0)
        return out

    # --- event time (eventTime.alignment=cut): record timestamps, see event_time.py -------------
    @override
    def event_time_lookup(self) -> KafkaEventTimeLookup:
        return self._times

    @override
    def is_finished(self, split: KafkaPartitionSplit, position: Position) -> bool:
        if (split.topic, split.partition) in self._gone:
            return True
        return split.is_bounded and int(position) >= split.stopping_offset

    @override
    def range_splits(
        self, split: KafkaPartitionSplit, start: Position, end: Position
    ) -> list[KafkaPartitionSplit]:
        start = max(int(start), self._starts.get((split.topic, split.partition), 0))
        if start >= int(end):
            return []
        return [
            KafkaPartitionSplit(split.topic, split.partition, a, b)
            for a, b in _spark_pieces(
                int(start),
                int(end),
                self._plan_sizes,
                self.options.min_partitions,
                self.options.max_records_per_partition,
            )
        ]

    @override
    def on_commit(self, positions: Mapping[str, tuple[KafkaPartitionSplit, Position]]) -> None:
        if self.options.commit_offsets_to_group:
            self._commit_group({(s.topic, s.partition): int(pos) for s, pos in positions.values()})

    def _commit_group(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit offsets that moved since the last commit (best effort: a failure is logged)."""
        changed = {tp: o for tp, o in offsets.items() if self._group_committed.get(tp) != o}
        if not changed or self._outage.down:
            return  # nothing moved, or the cluster is not answering lookups: retried later
        try:
            self._cluster().commit(changed)
        except Exception as e:  # the group's offsets are for monitoring; the query's state is Spark's
            LOG.warning("committing offsets to group %s failed (retried later): %s", self.options.group_id, e)
            return
        self._group_committed.update(changed)

    def describe(self) -> dict[str, Any]:
        """For logs (no secrets)."""
        return {"planner": "kafka", "options": repr(self.options)}


def _divide(start: int, end: int, parts: int) -> list[tuple[int, int]]:
    """``[start, end)`` in ``parts`` near-equal pieces (each ``remaining // parts left``, as Spark)."""
    pieces = []
    remaining = end - start
    for part in range(parts):
        size = remaining // (parts - part)
        remaining -= size
        if size > 0:
            pieces.append((start, start + size))
        start += size
    return pieces


def _spark_pieces(
    start: int, end: int, sizes: list[int], min_partitions: int | None, max_records: int | None
) -> list[tuple[int, int]]:
    """The Spark tasks for one planned range, as Spark's ``KafkaOffsetRangeCalculator``.

    ``maxRecordsPerPartition`` first cuts every range into ``ceil(size / max)`` pieces; then, if
    there are still fewer pieces than ``minPartitions``, each piece is cut again into
    ``max(1, round(size / total * minPartitions))``. ``sizes`` are all ranges of this plan.
    """
    pieces = [(start, end)]
    divided = list(sizes) or [end - start]
    if max_records:
        pieces = _divide(start, end, math.ceil((end - start) / max_records))
        divided = [b - a for n in divided for a, b in _divide(0, n, math.ceil(n / max_records))]
    if min_partitions and len(divided) < min_partitions:
        total = sum(divided)
        if total > 0:
            pieces = [
                q for a, b in pieces for q in _divide(a, b, max(1, round((b - a) / total * min_partitions)))
            ]
    return pieces
