"""``KafkaPartitionSplitReader``: reads assigned partitions with a pooled confluent-kafka consumer.

Each split is read from its starting offset up to (not including) its stopping offset, in large
``consume(num_messages=...)`` batches. A split ends at the first record at or past the stopping
offset, or when the partition's end (under ``read_committed``, the last stable offset) reaches it:
so transaction markers and aborted records, which leave gaps in the offsets, never stall a read.

A read of bounded splits that gets no record for ``kafkaConsumer.pollTimeoutMs`` (the cluster is
unreachable, or a connection hangs) fails with a ``ConnectorError`` naming the option, as Spark's
Kafka source fails a task after polling that long; librdkafka retries on its own until then.
"""

from __future__ import annotations

import bisect
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from typing_extensions import override

from connector_base import (
    ConnectorError,
    DataLossError,
    RecordsBySplits,
    SplitReader,
    SplitsAddition,
    SplitsChange,
)
from connectors.kafka import consumer_pool, fetch_sizing
from connectors.kafka.client_errors import unrecoverable_cause
from connectors.kafka.options import DEFAULT_CONSUME_BATCH, KafkaSourceOptions
from connectors.kafka.split import NO_STOPPING_OFFSET, KafkaPartitionSplit

__all__ = ["KafkaPartitionSplitReader", "KafkaRecords"]

LOG = logging.getLogger(__name__)

POLL_TIMEOUT_S = 0.2
WATERMARK_TIMEOUT_S = 30.0
STALL_RENEW_SHARE = 0.25
STALL_RENEW_MAX_S = 30.0
"""A bounded read with no record for this share of ``kafkaConsumer.pollTimeoutMs`` (at most
``STALL_RENEW_MAX_S``) gets a new consumer, once per stall; the whole timeout still fails it."""


@dataclass(slots=True)
class KafkaRecords:
    """The records of one split from one fetch (confluent-kafka ``Message`` objects, in offset order)."""

    topic: str
    partition: int
    messages: list[Any]


class _Assigned:
    __slots__ = ("split", "next_offset", "stop", "tp")

    def __init__(self, split: KafkaPartitionSplit) -> None:
        self.split = split
        self.next_offset = split.starting_offset
        self.stop = split.stopping_offset
        self.tp = (split.topic, split.partition)


class KafkaPartitionSplitReader(SplitReader[KafkaRecords, KafkaPartitionSplit]):
    """Reads splits of a bounded range exactly (and unbounded splits for the local runtime).

    Threading: the fetcher thread; ``wake_up`` needs no action because ``fetch`` blocks at most
    ``POLL_TIMEOUT_S``.
    """

    DEFAULT_CONSUME_BATCH = DEFAULT_CONSUME_BATCH
    """Records per consume unless ``consumeBatchSize`` is set."""

    def __init__(self, options: KafkaSourceOptions) -> None:
        from confluent_kafka import Message

        self._partition_of = Message.partition  # unbound C methods: map() calls them without bytecode
        self._topic_of = Message.topic
        self._options = options
        # taken from the pool with the first splits, whose boundedness picks the settings
        self._consumer: Any = None
        self._pool_key: Any = None
        self._pooled = False
        self._bounded = True
        self._sizing: dict[str, int] = {}  # the task's fetch settings (fetch_sizing)
        self._fetch_bytes = fetch_sizing.MAX_FETCH_BYTES  # max.partition.fetch.bytes of the consumer
        self._splits: dict[str, _Assigned] = {}
        self._by_tp: dict[tuple[str, int], str] = {}
        self._paused: set[str] = set()
        self._batch = options.consume_batch_size or self.DEFAULT_CONSUME_BATCH
        self._healthy = True
        self._last_progress = time.monotonic()
        self._renewed_at = float("-inf")  # when the last stall got a new consumer
        self._stall_renew_s = min(STALL_RENEW_MAX_S, STALL_RENEW_SHARE * options.poll_timeout_ms / 1000.0)

    # --- assignment -----------------------------------------------------------------------------
    @override
    def handle_splits_changes(self, change: SplitsChange[KafkaPartitionSplit]) -> None:

        if isinstance(change, SplitsAddition):
            if self._consumer is None:
                self._bounded = all(s.stopping_offset != NO_STOPPING_OFFSET for s in change.splits)
                config = self._consumer_config(change.splits)
                self._pool_key, self._consumer, self._pooled = consumer_pool.acquire(
                    config, self._create_consumer
                )
            added = []
            for split in change.splits:
                # no offset lookup here: a start offset that is gone (or a partition that is)
                # comes back from the fetch itself as an error, checked then (``_on_error``), as
                # Spark's Kafka source checks on an out-of-range fetch. A lookup per split cost
                # ~18 ms each, queued behind a pooled consumer's parked fetch.
                a = _Assigned(split)
                self._splits[split.split_id] = a
                self._by_tp[a.tp] = split.split_id
                added.append(a)
            self._last_progress = time.monotonic()  # the wait for records starts now
            self._assign(added)
        else:
            gone = [self._splits.pop(s.split_id) for s in change.splits if s.split_id in self._splits]
            for a in gone:
                self._by_tp.pop(a.tp, None)
                self._paused.discard(a.split.split_id)
            self._unassign(gone)

    def _consumer_config(self, splits: Sequence[KafkaPartitionSplit]) -> dict[str, Any]:
        """The consumer's settings for a task's ``splits``: a bounded task fetches about what its
        largest range holds (``fetch_sizing``), so a range ending before its log does parses little
        beyond its stop."""
        if self._bounded and all(s.starting_offset >= 0 for s in splits):
            self._sizing = fetch_sizing.fetch_settings(
                (s.topic, s.stopping_offset - s.starting_offset) for s in splits
            )
        config = self._options.consumer_config(self._bounded, self._sizing)
        self._fetch_bytes = int(config["max.partition.fetch.bytes"])  # the user's, where set
        return config

    @override
    def pause_or_resume_splits(
        self,
        splits_to_pause: Sequence[KafkaPartitionSplit],
        splits_to_resume: Sequence[KafkaPartitionSplit],
    ) -> None:

        pause = [
            self._splits[s.split_id]
            for s in splits_to_pause
            if s.split_id in self._splits and s.split_id not in self._paused
        ]
        resume = [
            self._splits[s.split_id]
            for s in splits_to_resume
            if s.split_id in self._splits and s.split_id in self._paused
        ]
        self._paused.update(a.split.split_id for a in pause)
        self._paused.difference_update(a.split.split_id for a in resume)
        self._unassign(pause)  # drops what librdkafka fetched ahead: resuming starts at next_offset
        self._assign(resume)

    def _assign(self, assigned: Sequence[_Assigned]) -> None:
        """Assign the splits not done yet, each at its next offset."""
        from confluent_kafka import TopicPartition

        live = [TopicPartition(a.tp[0], a.tp[1], a.next_offset) for a in assigned if not self._done(a)]
        if live:
            self._consumer.incremental_assign(live)

    def _unassign(self, assigned: Sequence[_Assigned]) -> None:
        from confluent_kafka import TopicPartition

        if assigned:
            try:
                self._consumer.incremental_unassign([TopicPartition(a.tp[0], a.tp[1]) for a in assigned])
            except Exception as e:  # not assigned (finished before assignment)
                LOG.debug("unassign: %s", e)

    @staticmethod
    def _done(a: _Assigned) -> bool:
        return a.stop != NO_STOPPING_OFFSET and a.next_offset >= a.stop

    # --- data loss ------------------------------------------------------------------------------
    def _check_available(self, a: _Assigned, reported: str) -> None:
        """After the consumer ``reported`` an error on a split's partition (offset out of range,
        unknown partition): move past offsets that are gone, or fail (``failOnDataLoss``)."""

        bounded = a.stop != NO_STOPPING_OFFSET
        try:
            low, high = self._watermarks(a.tp)
        except Exception as e:
            if self._partition_exists(a.tp):
                # the consumer's error came with a lookup that failed too (a broker restarting
                # answers both that way): no proof of loss, so the split is fetched again from
                # where it stands; a lasting outage ends in the fetch's own time limits
                LOG.info(
                    "topic %s partition %d: %s, and its offsets cannot be looked up (%s); it still "
                    "exists (or the cluster does not answer): fetching again at offset %d",
                    a.tp[0], a.tp[1], reported, e, a.next_offset,
                )  # fmt: skip
                return
            low = high = None  # the partition is gone
        if low is not None and high is not None and low <= a.next_offset <= high:
            return  # nothing is missing (the reported error was transient)
        if low is None or high is None:
            lost_to, resume, why = (
                (a.stop if bounded else None),
                (a.stop if bounded else None),
                "the partition no longer exists",
            )
        elif low > a.next_offset:
            lost_to = min(low, a.stop) if bounded else low
            resume, why = lost_to, f"the earliest available offset is {low}"
        else:  # the log now ends below our position (truncated or recreated)
            lost_to, resume, why = (
                (a.stop if bounded else None),
                (a.stop if bounded else low),
                f"the log ends at {high}",
            )
        message = (
            f"data loss in topic {a.tp[0]} partition {a.tp[1]}: offsets [{a.next_offset}, "
            f"{lost_to if lost_to is not None else 'end'}) are no longer available ({why})"
            + f"; broker reported: {reported}"
        )
        if self._options.fail_on_data_loss or resume is None:
            raise DataLossError(
                message
                + ". Set failOnDataLoss=false to log such losses and continue from the earliest available"
                " offset."
            )
        LOG.warning("%s; continuing at offset %d (failOnDataLoss=false)", message, resume)
        a.next_offset = resume

    def _watermarks(self, tp: tuple[str, int]) -> tuple[int, int]:
        """``(low, high)`` asked of the partition's leader; a pooled consumer that cannot reach the
        cluster is replaced once first (its idle connections may be the dead ones)."""
        from confluent_kafka import KafkaError, KafkaException, TopicPartition

        call_timeout_s = min(WATERMARK_TIMEOUT_S, self._options.api_timeout_ms / 1000.0)
        while True:
            try:
                low, high = self._consumer.get_watermark_offsets(
                    TopicPartition(tp[0], tp[1]), timeout=call_timeout_s, cached=False
                )
                return int(low), int(high)
            except KafkaException as e:
                code = e.args[0].code() if e.args else None
                unreachable = code in (
                    KafkaError._TRANSPORT,
                    KafkaError._TIMED_OUT,
                    KafkaError._ALL_BROKERS_DOWN,
                )
                if not (unreachable and self._pooled):
                    raise
                self._renew_consumer(e)  # no longer pooled: a second failure raises

    def _renew_consumer(self, error: Exception | str) -> None:
        """Swap a consumer that did not answer for a fresh one holding the same assignment.

        A consumer that idled in the pool may hold connections whose peer vanished without a FIN
        (a NAT or firewall dropped them, a proxy went half-open): every request on them waits out
        its timeout, though new connections would be answered. The same holds for a consumer whose
        read stalled (``_check_progress``). A fresh consumer costs one connection; the stale one is
        closed, never pooled again. The fresh one goes back to the pool when the reader closes.
        """

        LOG.warning("a Kafka consumer did not answer (%s); retrying with a new consumer", error)
        stale, self._pooled = self._consumer, False
        self._consumer = self._create_consumer(self._options.consumer_config(self._bounded, self._sizing))
        self._assign([a for sid, a in self._splits.items() if sid not in self._paused])
        try:
            stale.close()
        except Exception as e:  # closing a consumer whose connections are dead
            LOG.debug("closing the stale consumer: %s", e)

    def _partition_exists(self, tp: tuple[str, int]) -> bool:
        try:
            md = self._consumer.list_topics(tp[0], timeout=WATERMARK_TIMEOUT_S)
        except Exception:  # the cluster does not answer: not a proof of loss
            return True
        topic = md.topics.get(tp[0])
        return topic is not None and topic.error is None and tp[1] in topic.partitions

    # --- fetching -------------------------------------------------------------------------------
    @override
    def fetch(self) -> RecordsBySplits[KafkaRecords]:
        from confluent_kafka import TopicPartition

        out: RecordsBySplits[KafkaRecords] = RecordsBySplits()
        finished: list[_Assigned] = []
        for a in list(self._splits.values()):
            if self._done(a):
                finished.append(a)
        if len(finished) < len(self._splits):
            # librdkafka's batch consume waits for num_messages or the timeout: never ask for more
            # than the bounded splits still hold, or the last batch of a range waits out the timeout
            wanted = self._batch
            if all(a.stop != NO_STOPPING_OFFSET for a in self._splits.values()):
                remaining = sum(max(0, a.stop - a.next_offset) for a in self._splits.values())
                wanted = max(1, min(wanted, remaining))
            position = sum(a.next_offset for a in self._splits.values())
            self._consume(wanted, out, finished)
            moved = bool(finished) or sum(a.next_offset for a in self._splits.values()) != position
            self._check_progress(moved)
        for a in finished:
            sid = a.split.split_id
            if sid in self._splits:
                del self._splits[sid]
                self._by_tp.pop(a.tp, None)
                self._paused.discard(sid)
                out.add_finished_split(sid)
        self._unassign([a for a in finished])
        self._report_caught_up(out, TopicPartition)
        return out

    def _consume(self, wanted: int, out: RecordsBySplits[Any], finished: list[_Assigned]) -> None:
        """Take up to ``wanted`` records into ``out``; splits that reached their end go to ``finished``."""
        from confluent_kafka import KafkaError, TopicPartition

        messages = self._consumer.consume(num_messages=wanted, timeout=POLL_TIMEOUT_S)
        if messages:
            self._dispatch(messages, out, finished, KafkaError, TopicPartition)

    _create_consumer = staticmethod(consumer_pool.create)
    """Makes a new client for a configuration (the pool calls it when it has no idle one)."""

    def _report_caught_up(self, out: RecordsBySplits[KafkaRecords], tp_cls: Any) -> None:
        """Which reading splits are at their partition's end, from librdkafka's cached high watermark."""
        for sid, a in self._splits.items():
            if sid in self._paused:
                continue
            try:
                _, high = self._consumer.get_watermark_offsets(tp_cls(a.tp[0], a.tp[1]), cached=True)
            except Exception:  # nothing cached yet: no report
                continue
            if high is not None and high >= 0:
                out.set_caught_up(sid, a.next_offset >= high)

    def _check_progress(self, progressed: bool) -> None:
        """Fail a bounded read that has had no record for ``kafkaConsumer.pollTimeoutMs``."""
        now = time.monotonic()
        if (
            progressed
            or self._paused  # held back on purpose (watermark alignment), not by the network
            or any(a.stop == NO_STOPPING_OFFSET for a in self._splits.values())
        ):
            self._last_progress = now  # an open split may wait for records forever (local runtime)
            return
        stalled_s = now - self._last_progress
        if stalled_s * 1000.0 < self._options.poll_timeout_ms:
            if stalled_s >= self._stall_renew_s and self._renewed_at < self._last_progress:
                # the offsets were planned and exist, yet nothing came: a client that lost track of
                # a partition (stuck in an internal fetch state after a broker restart or leader
                # change) or holds connections that no longer answer waits out the whole timeout
                # otherwise. A new consumer starts from a clean state at the same offsets, as a
                # retried task's new consumer does in Spark's Kafka source.
                self._renewed_at = now
                self._renew_consumer(f"no records for {stalled_s:.1f} s while reading {self._pending()}")
            return
        self._healthy = False  # its connections may be the hung ones
        raise ConnectorError(
            f"no records from Kafka for {self._options.poll_timeout_ms} ms (kafkaConsumer.pollTimeoutMs) "
            f"while reading {self._pending()}: the brokers of the partitions did not answer (a new "
            f"consumer after {self._stall_renew_s:.1f} s got nothing either); the offsets were planned "
            "and exist. Raise kafkaConsumer.pollTimeoutMs to wait longer for them"
        )

    def _pending(self) -> str:
        """The unfinished splits as ``topic-partition [next, stop)``, for messages."""
        return ", ".join(
            f"{a.tp[0]}-{a.tp[1]} [{a.next_offset}, {a.stop})"
            for a in self._splits.values()
            if not self._done(a)
        )

    def _dispatch(
        self,
        messages: list[Any],
        out: RecordsBySplits[KafkaRecords],
        finished: list[_Assigned],
        kafka_error: Any,
        tp_cls: Any,
    ) -> None:
        errors = [m for m in messages if m.error() is not None]
        if errors:
            messages = [m for m in messages if m.error() is None]
        if messages:
            self._dispatch_records(messages, out, finished)
        for m in errors:  # after the records that came before them
            self._on_error(m, finished, kafka_error, tp_cls)

    def _dispatch_records(
        self, messages: list[Any], out: RecordsBySplits[KafkaRecords], finished: list[_Assigned]
    ) -> None:
        for sid, msgs in self._group(messages):
            a = self._splits.get(sid)
            if a is None or a in finished:
                continue
            if msgs[0].offset() < a.next_offset:  # stale records (never expected): drop them
                msgs = [m for m in msgs if m.offset() >= a.next_offset]
                if not msgs:
                    continue
            stop = a.stop
            if stop != NO_STOPPING_OFFSET and msgs[-1].offset() >= stop:
                offsets = [m.offset() for m in msgs]
                msgs = msgs[: bisect.bisect_left(offsets, stop)]
                finished.append(a)
            if msgs:
                a.next_offset = msgs[-1].offset() + 1
                out.add_all(sid, [KafkaRecords(a.tp[0], a.tp[1], msgs)])
            if self._done(a) and a not in finished:
                finished.append(a)

    def _group(self, messages: list[Any]) -> list[tuple[str, list[Any]]]:
        """``messages`` cut into runs of one split each, in order (a split may have several runs).

        librdkafka hands out a fetch response's records of one partition together, so a consume
        batch is a few long runs: found with one C-level pass over the partition numbers instead of
        a Python step per record. The topic is only read when two splits share a partition number.
        """
        if len(self._splits) == 1:
            return [(next(iter(self._splits)), messages)]
        n = len(messages)
        partitions = np.fromiter(map(self._partition_of, messages), dtype=np.int64, count=n)
        bounds = set((np.flatnonzero(np.diff(partitions)) + 1).tolist())
        if len({tp[1] for tp in self._by_tp}) < len(self._by_tp):  # two topics, same partition number
            topics = list(map(self._topic_of, messages))
            bounds.update(i for i in range(1, n) if topics[i] != topics[i - 1])
        cuts = sorted(bounds)
        groups: list[tuple[str, list[Any]]] = []
        for start, end in zip([0, *cuts], [*cuts, n], strict=True):
            sid = self._by_tp.get((messages[start].topic(), int(partitions[start])))
            if sid is not None:
                groups.append((sid, messages[start:end]))
        return groups

    def _on_error(self, m: Any, finished: list[_Assigned], kafka_error: Any, tp_cls: Any) -> None:
        err = m.error()
        sid = self._by_tp.get((m.topic(), m.partition())) if m.topic() else None
        a = self._splits.get(sid) if sid else None
        code = err.code()
        if code == kafka_error._PARTITION_EOF:
            # the end of the partition (the last stable offset under read_committed): offsets up
            # to it hold no more records for us, e.g. transaction markers or aborted records
            if a is not None and a.stop != NO_STOPPING_OFFSET and m.offset() >= a.stop and a not in finished:
                a.next_offset = max(a.next_offset, a.stop)
                finished.append(a)
            return
        if code in (
            kafka_error._AUTO_OFFSET_RESET,
            kafka_error.OFFSET_OUT_OF_RANGE,
            kafka_error.UNKNOWN_TOPIC_OR_PART,
            kafka_error._UNKNOWN_PARTITION,
            kafka_error._UNKNOWN_TOPIC,
        ):
            if a is None:
                return
            self._check_available(a, reported=err.str())
            if self._done(a):
                finished.append(a)
            else:
                self._consumer.incremental_unassign([tp_cls(a.tp[0], a.tp[1])])
                self._consumer.incremental_assign([tp_cls(a.tp[0], a.tp[1], a.next_offset)])
            return
        cause = unrecoverable_cause(err)  # fatal, or authentication / TLS that retries cannot fix
        if cause is not None:
            self._healthy = False
            raise ConnectorError(f"Kafka consumer failed: {cause}")
        LOG.debug("consumer reported (retried by the client): %s", err.str())

    @override
    def wake_up(self) -> None:
        pass

    @override
    def close(self) -> None:
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            consumer_pool.release(self._pool_key, consumer, reusable=self._healthy)
