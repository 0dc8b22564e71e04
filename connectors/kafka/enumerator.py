"""``KafkaSourceEnumerator``: finds the subscribed partitions (periodically) and assigns them as splits."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from typing_extensions import override

from connector_base import ConnectorError, SplitEnumerator, SplitEnumeratorContext
from connector_base.serialization import FunctionSerializer
from connectors.kafka.cluster_client import KafkaClusterClient
from connectors.kafka.options import KafkaSourceOptions, SubscriptionKind
from connectors.kafka.positions import LATEST, OffsetsInitializer, TopicPartition
from connectors.kafka.reachability import OutageClock
from connectors.kafka.split import NO_STOPPING_OFFSET, KafkaPartitionSplit

__all__ = ["ENUMERATOR_STATE_SERIALIZER", "KafkaEnumeratorState", "KafkaSourceEnumerator"]

LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class KafkaEnumeratorState:
    """The partitions already assigned, and whether the initial discovery (starting offsets) ran."""

    assigned: frozenset[TopicPartition] = frozenset()
    initial_discovery_done: bool = False


ENUMERATOR_STATE_SERIALIZER: FunctionSerializer[KafkaEnumeratorState] = FunctionSerializer(
    1,
    lambda s: {"assigned": [[t, p] for t, p in sorted(s.assigned)], "initial": s.initial_discovery_done},
    lambda d: KafkaEnumeratorState(frozenset((str(t), int(p)) for t, p in d["assigned"]), bool(d["initial"])),
)
"""Version 1: ``{"assigned": [[topic, partition], ...], "initial": bool}``."""


class KafkaSourceEnumerator(SplitEnumerator[KafkaPartitionSplit, KafkaEnumeratorState]):
    """Discovers partitions through ``context.call_async`` (every ``partitionDiscoveryIntervalMs`` while
    streaming) and hands out one split per new partition.

    The first discovery starts partitions at the starting offsets; partitions found later start at
    the earliest offset (as Spark). Batch splits get their stopping offset here too.

    Threading: the coordinator thread (the Spark driver's stream-reader thread).
    """

    def __init__(
        self,
        context: SplitEnumeratorContext[KafkaPartitionSplit],
        options: KafkaSourceOptions,
        client_factory: Callable[[], KafkaClusterClient],
        state: KafkaEnumeratorState | None = None,
        outage: OutageClock | None = None,
    ) -> None:
        self._context = context
        self._options = options
        self._client_factory = client_factory
        # shared with the planner's lookups (``KafkaSource.outage``): a discovery that gets no answer
        # counts toward the query's outage bound, and one past it fails the query
        self._outage = outage or OutageClock(options)
        self._discovery_started = 0.0
        self._client: KafkaClusterClient | None = None
        state = state or KafkaEnumeratorState()
        self._assigned: set[TopicPartition] = set(state.assigned)
        self._initial_done = state.initial_discovery_done
        self._pending: list[KafkaPartitionSplit] = []
        self._returned: dict[int, list[KafkaPartitionSplit]] = {}

    def _cluster(self) -> KafkaClusterClient:
        if self._client is None:
            self._client = self._client_factory()
        return self._client

    @override
    def start(self) -> None:
        period = None
        if self._options.streaming:
            period = self._options.partition_discovery_interval_ms / 1000.0
        self._context.call_async(self._discover, self._on_discovered, 0.0, period)

    # --- discovery (runs through call_async) ----------------------------------------------------
    def _subscribed(self) -> list[TopicPartition]:
        sub = self._options.subscription
        topics = self._cluster().partitions() or {}
        if sub.kind is SubscriptionKind.ASSIGN:
            return self._assigned_present(sub.partitions, topics)
        if not self._initial_done and sub.kind is SubscriptionKind.SUBSCRIBE:
            absent = [t for t in sub.topics if t not in topics]
            if absent:  # as Spark's Kafka source, read nothing from them until they appear
                LOG.warning(
                    "subscribe names topics that do not exist on %s: %s; nothing is read from them until "
                    "they are created",
                    self._options.bootstrap_servers,
                    ", ".join(absent),
                )
        return sorted((t, p) for t, ps in topics.items() if sub.matches(t) for p in ps)

    def _assigned_present(
        self, partitions: Sequence[TopicPartition], topics: Mapping[str, Sequence[int]]
    ) -> list[TopicPartition]:
        """The ``assign`` partitions to read: those the cluster has (and those read before).

        As Spark's Kafka source (``AssignStrategy`` keeps the assigned partitions its admin client
        finds): a topic that does not exist fails; a partition an existing topic does not have (yet)
        is left out with a warning, and a stream reads it from its start once it is created.
        """
        if not self._initial_done:
            missing = sorted({t for t, _p in partitions if t not in topics})
            if missing:
                raise ConnectorError(
                    f"option 'assign' names topics that do not exist on {self._options.bootstrap_servers}: "
                    f"{', '.join(missing)}; create them or assign existing ones"
                )
        present = [tp for tp in partitions if tp in self._assigned or tp[1] in topics.get(tp[0], ())]
        if not self._initial_done and len(present) < len(partitions):
            LOG.warning(
                "assign names topic partitions that do not exist on %s: %s; nothing is read from them "
                "until they are created",
                self._options.bootstrap_servers,
                ", ".join(f"{t}-{p}" for t, p in partitions if (t, p) not in present),
            )
        return present

    def _check_named_are_subscribed(self, subscribed: Sequence[TopicPartition]) -> None:
        """A JSON offsets or timestamps map naming a partition the subscription does not select fails,
        as in Spark's Kafka source (``KafkaOffsetReaderAdmin``: the named partitions must be assigned)."""
        selected = set(subscribed)
        for role, initializer in (("starting", self._options.starting), ("ending", self._options.ending)):
            if initializer is None:
                continue
            extra = sorted(initializer.named_partitions() - selected)
            if extra:
                option = role + initializer.json_option_suffix
                raise ConnectorError(
                    f"option '{option}' names topic partitions that the subscription does not select: "
                    f"{', '.join(f'{t}-{p}' for t, p in extra)} (selected: "
                    f"{', '.join(f'{t}-{p}' for t, p in sorted(selected)) or 'none'}); "
                    "name only subscribed ones"
                )

    def _discover(self) -> list[KafkaPartitionSplit]:
        self._discovery_started = time.monotonic()
        subscribed = self._subscribed()
        if not self._initial_done:
            self._check_named_are_subscribed(subscribed)
        new = [tp for tp in subscribed if tp not in self._assigned]
        if not new:
            return []
        client = self._cluster()
        initializer = self._options.starting if not self._initial_done else OffsetsInitializer.earliest()
        starts = initializer.resolve(new, client)
        stops: dict[TopicPartition, int] = {}
        if self._options.ending is not None:
            stops = self._options.ending.resolve(new, client)
            latest = client.latest(new)
            for tp, stop in list(stops.items()):
                if stop == LATEST or stop > latest[tp]:
                    stops[tp] = latest[tp]
        splits = []
        for tp in new:
            start, stop = starts[tp], stops.get(tp, NO_STOPPING_OFFSET)
            if stop != NO_STOPPING_OFFSET and start > stop:
                raise ConnectorError(
                    f"starting offset {start} is after the ending offset {stop} for topic {tp[0]} "
                    f"partition {tp[1]}"
                )
            splits.append(KafkaPartitionSplit(tp[0], tp[1], start, stop))
        return splits

    def _on_discovered(self, splits: list[KafkaPartitionSplit] | None, error: BaseException | None) -> None:
        if error is not None:
            if not self._initial_done:
                raise error
            if isinstance(error, ConnectorError):  # a lookup that got no answer
                self._outage.failed(error, self._discovery_started)  # raises past the outage bound
            LOG.warning("partition discovery failed (retried at the next interval): %s", error)
            return
        self._outage.answered()
        self._initial_done = True
        for s in splits or []:
            self._assigned.add((s.topic, s.partition))
            self._pending.append(s)
        if splits:
            LOG.info("discovered %d new partitions", len(splits))
        self._assign()

    # --- assignment -----------------------------------------------------------------------------
    def _assign(self) -> None:
        readers = sorted(self._context.registered_readers())
        if not readers:
            return
        assignment: dict[int, list[KafkaPartitionSplit]] = {}
        for i, split in enumerate(self._pending):
            assignment.setdefault(readers[i % len(readers)], []).append(split)
        self._pending = []
        for subtask in readers:  # splits returned by a failed reader go to that reader only
            if subtask in self._returned:
                assignment.setdefault(subtask, []).extend(self._returned.pop(subtask))
        if assignment:
            self._context.assign_splits(assignment)
        if not self._options.streaming and self._initial_done:
            for r in readers:
                if r not in self._returned:
                    self._context.signal_no_more_splits(r)

    @override
    def add_reader(self, subtask_id: int) -> None:
        self._assign()

    @override
    def handle_split_request(self, subtask_id: int, requester_hostname: str | None = None) -> None:
        self._assign()

    def add_splits_back(self, splits: Sequence[KafkaPartitionSplit], subtask_id: int) -> None:
        """Splits of a failed reader, as of its last checkpoint: they go back to that reader when it
        registers again (as Flink's Kafka enumerator), never to a reader that may have finished."""
        self._returned.setdefault(subtask_id, []).extend(splits)
        self._assign()

    @override
    def snapshot_state(self, checkpoint_id: int) -> KafkaEnumeratorState:
        return KafkaEnumeratorState(frozenset(self._assigned), self._initial_done)

    @override
    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
