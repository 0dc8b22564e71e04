"""``KafkaClusterClient``: the driver's batched metadata and offset lookups (an ``OffsetLookup``)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from typing_extensions import override

from connector_base import ConnectorError
from connectors.kafka.client_errors import ConnectErrorWatch
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.positions import OffsetLookup, TopicPartition
from connectors.kafka.reachability import first_contact

__all__ = ["KafkaClusterClient"]

LOG = logging.getLogger(__name__)

METADATA_SLICE_S = 1.0
"""How often a metadata wait checks for an authentication or TLS failure."""
ANSWER_GRACE_S = 5.0
"""How much longer than its ``request_timeout`` an admin request's futures are awaited before the
attempt counts as failed: librdkafka should resolve them by then, and the driver's planning thread
must never wait on one for ever."""
COMMIT_POLL_S = 0.1
"""How often a group commit's wait serves the client's callbacks (where its answer arrives)."""
R = TypeVar("R")
"""A lookup's result type."""
K = TypeVar("K")
"""The key of an admin request's futures (a topic partition, a config resource)."""


class InvalidOffsetAnswer(Exception):
    """A ListOffsets result that is no offset (retried like a client error)."""


class KafkaClusterClient(OffsetLookup):
    """Lists partitions, looks up offsets (one request per kind), commits group offsets.

    Retries each lookup ``fetchOffset.numRetries`` times, ``fetchOffset.retryIntervalMs`` apart (Spark's
    options; 3 and 1000 ms); each request waits at most ``kafka.default.api.timeout.ms``.

    A batch query's client lives for one planning and is silent (librdkafka's ``log_level`` 0): it
    makes the query's first contact itself (``first_contact``), which would otherwise log about 20
    lines a second for a bad host name. A streaming query keeps its client for the query's life and
    librdkafka's own lines about an outage or a moved leader stay visible on it, so its first contact
    is made by a silent client of that call's own.

    Threading: the driver's stream-reader thread only.
    """

    def __init__(
        self, options: KafkaSourceOptions, retries: int | None = None, retry_interval_s: float | None = None
    ) -> None:
        from confluent_kafka.admin import AdminClient

        self._options = options
        self._connect_errors = ConnectErrorWatch("connecting to Kafka")
        self._quiet = not options.streaming
        conf = {**options.driver_client_config(), "error_cb": self._connect_errors}
        if self._quiet:
            conf["log_level"] = 0
        self._admin = AdminClient(conf)
        self._group_consumer: Any = None
        self._commit_answers: list[tuple[Any, list[Any]]] = []
        self._retries = options.fetch_offset_retries if retries is None else retries
        self._retry_interval_s = (
            options.fetch_offset_retry_interval_ms / 1000.0 if retry_interval_s is None else retry_interval_s
        )
        self._timeout_s = options.api_timeout_ms / 1000.0

    def _retry(self, what: str, call: Callable[[], R]) -> R:
        last: Exception | None = None
        for attempt in range(self._retries + 1):
            try:
                return call()
            except ConnectorError:
                raise
            except Exception as e:  # client errors are retried, then reported
                last = e
                LOG.debug("%s failed (attempt %d): %s", what, attempt + 1, e)
                time.sleep(self._retry_interval_s)
        raise ConnectorError(f"{what} failed after {self._retries + 1} attempts: {last}") from last

    def _answers(self, futures: Mapping[K, Future[Any]], what: str) -> dict[K, Any]:
        """The results of one admin request's futures, awaited ``ANSWER_GRACE_S`` past its timeout
        at most (a ``TimeoutError`` then, which ``_retry`` counts as a failed attempt)."""
        deadline = time.monotonic() + self._timeout_s + ANSWER_GRACE_S
        out: dict[K, Any] = {}
        for key, future in futures.items():
            try:
                out[key] = future.result(timeout=max(0.0, deadline - time.monotonic()))
            except FutureTimeout:
                raise TimeoutError(
                    f"no answer for the {what} within {self._timeout_s + ANSWER_GRACE_S:.0f} s "
                    "(kafka.default.api.timeout.ms plus a grace)"
                ) from None
        return out

    def first_contact(self) -> None:
        """Return once the cluster answers; raise ``ClusterUnreachableError`` within the bound if not
        (``reachability.first_contact``, on this client where it is a batch query's)."""
        if self._quiet:
            first_contact(self._options, self._admin, self._connect_errors)
        else:
            first_contact(self._options)

    # --- metadata -------------------------------------------------------------------------------
    def partitions(self) -> dict[str, list[int]] | None:
        """Every topic (not internal) and its partitions; ``None`` if the cluster does not answer."""

        def _list() -> dict[str, list[int]]:
            md = self._metadata()
            return {
                name: sorted(t.partitions)
                for name, t in md.topics.items()
                if t.error is None and not name.startswith("__")
            }

        return self._retry("listing topics", _list)

    def _metadata(self) -> Any:
        """Cluster metadata, asked in short slices so that an authentication or TLS failure (reported
        through ``error_cb``, served by ``poll``) ends the wait at once instead of after the timeout."""
        from confluent_kafka import KafkaException

        deadline = time.monotonic() + self._timeout_s
        while True:
            try:
                return self._admin.list_topics(timeout=METADATA_SLICE_S)
            except KafkaException:
                self._admin.poll(0)
                self._connect_errors.raise_if_failed()
                if time.monotonic() >= deadline:
                    raise

    # --- OffsetLookup ---------------------------------------------------------------------------
    def _list_offsets(
        self, specs: Mapping[TopicPartition, Any], what: str, lowest: int = 0
    ) -> dict[TopicPartition, Any]:
        """Each partition's ListOffsets result (``offset``, ``timestamp``), one request per attempt; an
        offset below ``lowest`` counts as a failed attempt.

        librdkafka can hand out a partition's result as ``OFFSET_INVALID`` (-1001) with no error when
        its request got no answer (seen in a CI run while the broker was unreachable); taken as the
        log's end, that is a false data loss, or with ``failOnDataLoss=false`` a wrong position.
        """
        from confluent_kafka import IsolationLevel
        from confluent_kafka import TopicPartition as TP

        if not specs:
            return {}
        isolation = (
            IsolationLevel.READ_COMMITTED if self._options.read_committed else IsolationLevel.READ_UNCOMMITTED
        )

        def _call() -> dict[TopicPartition, Any]:
            futures = self._admin.list_offsets(
                {TP(t, p): spec for (t, p), spec in specs.items()},
                isolation_level=isolation,
                request_timeout=self._timeout_s,
            )
            answers = self._answers(futures, f"{what} offsets")
            found = {(tp.topic, tp.partition): r for tp, r in answers.items()}
            invalid = sorted((tp, int(r.offset)) for tp, r in found.items() if r.offset < lowest)
            if invalid:
                raise InvalidOffsetAnswer(f"no valid {what} offset for {invalid}")
            return found

        return self._retry(f"looking up {what} offsets", _call)

    @override
    def earliest(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        from confluent_kafka.admin import OffsetSpec

        found = self._list_offsets({tp: OffsetSpec.earliest() for tp in partitions}, "earliest")
        return {tp: int(r.offset) for tp, r in found.items()}

    @override
    def latest(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        from confluent_kafka.admin import OffsetSpec

        found = self._list_offsets({tp: OffsetSpec.latest() for tp in partitions}, "latest")
        return {tp: int(r.offset) for tp, r in found.items()}

    @override
    def for_times(self, timestamps: Mapping[TopicPartition, int]) -> dict[TopicPartition, int | None]:
        from confluent_kafka.admin import OffsetSpec

        found = self._list_offsets(  # -1: no record at or after the time
            {tp: OffsetSpec.for_timestamp(ms) for tp, ms in timestamps.items()}, "timestamp", lowest=-1
        )
        return {tp: (int(r.offset) if r.offset >= 0 else None) for tp, r in found.items()}

    def max_timestamps(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int | None]:
        """The largest record timestamp of each partition (``None`` for an empty one), one request."""
        from confluent_kafka.admin import OffsetSpec

        found = self._list_offsets(  # -1: an empty partition
            {tp: OffsetSpec.max_timestamp() for tp in partitions}, "max timestamp", lowest=-1
        )
        return {
            tp: (int(r.timestamp) if r.offset >= 0 and r.timestamp >= 0 else None) for tp, r in found.items()
        }

    def log_append_time_topics(self, topics: Sequence[str]) -> set[str]:
        """Those of ``topics`` whose ``message.timestamp.type`` is ``LogAppendTime``; a topic whose
        configuration cannot be read counts as ``CreateTime`` (the safe assumption)."""
        from confluent_kafka.admin import ConfigResource, ResourceType

        if not topics:
            return set()
        found: set[str] = set()
        try:
            futures = self._admin.describe_configs(
                [ConfigResource(ResourceType.TOPIC, t) for t in topics], request_timeout=self._timeout_s
            )
            for resource, config in self._answers(futures, "topic configurations").items():
                entry = config.get("message.timestamp.type")
                if entry is not None and entry.value == "LogAppendTime":
                    found.add(resource.name)
        except Exception as e:  # a broker without DescribeConfigs: upper timestamp bounds stay with Spark
            LOG.info("cannot read topic timestamp types (%s); treating them as CreateTime", e)
        return found

    def _group(self) -> Any:
        from confluent_kafka import Consumer

        if self._group_consumer is None:
            conf = self._options.base_client_config()
            conf.update(
                {
                    "group.id": self._options.group_id,
                    "enable.auto.commit": False,
                    "on_commit": lambda error, partitions: self._commit_answers.append((error, partitions)),
                }
            )
            self._group_consumer = Consumer(conf)
        return self._group_consumer

    @override
    def committed(self, partitions: Sequence[TopicPartition]) -> dict[TopicPartition, int | None]:
        from confluent_kafka import TopicPartition as TP

        def _call() -> dict[TopicPartition, int | None]:
            got = self._group().committed([TP(t, p) for t, p in partitions], timeout=self._timeout_s)
            return {(tp.topic, tp.partition): (tp.offset if tp.offset >= 0 else None) for tp in got}

        return self._retry("looking up committed offsets", _call)

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit ``offsets`` (next offsets to read) for ``kafka.group.id`` without joining the group.

        One attempt, awaited ``kafka.default.api.timeout.ms`` at most (then a ``ConnectorError``).
        librdkafka's synchronous commit has no timeout: with the cluster gone it waits for a group
        coordinator for ever (measured: still waiting after 30 s with no broker), which held the
        driver's planning of every later trigger. The commit is sent asynchronously and its answer
        (``on_commit``, served by ``poll``) awaited here instead. A commit left unanswered stays
        queued in the client and may still land; the next one carries newer offsets anyway.
        """
        from confluent_kafka import TopicPartition as TP

        if not offsets:
            return
        consumer = self._group()
        sent = {(t, p, o) for (t, p), o in offsets.items()}
        consumer.commit(offsets=[TP(t, p, o) for t, p, o in sorted(sent)], asynchronous=True)
        deadline = time.monotonic() + self._timeout_s
        while True:
            for answer in list(self._commit_answers):
                self._commit_answers.remove(answer)
                error, partitions = answer
                if {(tp.topic, tp.partition, tp.offset) for tp in partitions or []} != sent:
                    continue  # the late answer of an earlier commit that timed out
                failed = [tp for tp in partitions if tp.error is not None]
                if error is not None or failed:
                    detail = (
                        error
                        if error is not None
                        else ", ".join(f"{tp.topic}-{tp.partition}: {tp.error}" for tp in failed)
                    )
                    raise ConnectorError(f"committing group offsets failed: {detail}")
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise ConnectorError(
                    f"committing group offsets: no answer within {self._options.api_timeout_ms} ms "
                    "(kafka.default.api.timeout.ms)"
                )
            consumer.poll(min(COMMIT_POLL_S, left))

    def close(self) -> None:
        """Release the clients, waiting ``kafka.default.api.timeout.ms`` at most.

        Closing a consumer waits for its outstanding commits, for ever when the cluster is gone
        (librdkafka issue 3740), which would hold a stopping query: the close runs on its own thread
        and is left to finish in the background past that time.
        """
        consumer, self._group_consumer = self._group_consumer, None
        if consumer is None:
            return
        closing = threading.Thread(target=consumer.close, name="kafka-group-consumer-close", daemon=True)
        closing.start()
        closing.join(self._timeout_s)
        if closing.is_alive():
            LOG.warning(
                "closing the consumer of group %s did not finish within %d ms (the cluster does not "
                "answer); left to finish in the background",
                self._options.group_id,
                self._options.api_timeout_ms,
            )
