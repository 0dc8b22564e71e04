"""``KafkaNativePartitionSplitReader``: the split reader over the compiled fetch (``kafka.reader=native``).

The ``sparkflow-kafka-native`` wheel (``pip install 'sparkflow-connectors[kafka-native]'``; built from
``native/kafka_reader``) holds a librdkafka consumer that appends each fetched record straight into
Arrow builders with the GIL released, so no Python object is made per record or per header. Every
decision stays here, in the shared ``KafkaPartitionSplitReader``: assignment, stop offsets and EOF,
data-loss checks, renewal of a pooled consumer that does not answer, unrecoverable errors and the
``kafkaConsumer.pollTimeoutMs`` bound. This subclass only swaps the client (``_NativeConsumer``, an
adapter with the confluent-kafka methods the reader calls) and the consume step, whose records come
as one ``pyarrow.RecordBatch`` per run of a partition (``KafkaArrowRecords``), cut at the split's
stopping offset without a copy. Consumers are pooled per worker as the Python reader's are.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyarrow as pa
from typing_extensions import override

from connector_base import ConnectorError, RecordsBySplits, SplitsAddition, SplitsChange
from connector_base.spark.arrow_output import DEFAULT_BATCH_BYTES
from connectors.kafka import fetch_sizing
from connectors.kafka.options import NATIVE_CONSUME_BATCH
from connectors.kafka.reader_choice import INSTALL_HINT, NATIVE_MODULE, native_module
from connectors.kafka.split import NO_STOPPING_OFFSET, KafkaPartitionSplit
from connectors.kafka.split_reader import POLL_TIMEOUT_S, KafkaPartitionSplitReader, _Assigned

__all__ = ["KafkaArrowRecords", "KafkaNativePartitionSplitReader", "config_value"]

_OFFSET_COLUMN = 4


@dataclass(slots=True)
class KafkaArrowRecords:
    """The records of one split from one fetch, as an Arrow batch in Spark's Kafka schema."""

    topic: str
    partition: int
    batch: pa.RecordBatch
    last_offset: int


def _kafka_exception(error: Exception) -> Exception:
    """The confluent-kafka ``KafkaException`` for a ``NativeKafkaError`` (same librdkafka codes)."""
    from confluent_kafka import KafkaError, KafkaException

    code, message, fatal = error.args
    return KafkaException(KafkaError(code, message, fatal=fatal))


PYTHON_CLIENT_SETTINGS = frozenset({"max.poll.records"})
"""Settings confluent-kafka's Python ``Consumer`` takes itself and never hands to librdkafka (which
refuses them): the compiled consumer leaves them out. The reader sizes its own fetches either way."""


def config_value(value: Any) -> str:
    """A client setting's value as the string librdkafka takes (booleans as true/false)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


class _NativeConsumer:
    """The confluent-kafka ``Consumer`` methods ``KafkaPartitionSplitReader`` calls, over the compiled one.

    Its errors are confluent-kafka's ``KafkaException`` with the same codes, so the shared reader
    handles both clients alike.
    """

    def __init__(self, config: dict[str, Any]) -> None:
        module = native_module()
        if module is None:
            raise ConnectorError(
                f"kafka.reader=native: the module {NATIVE_MODULE} is missing; {INSTALL_HINT}"
            )
        self._error = module.NativeKafkaError
        try:
            settings = [(k, config_value(v)) for k, v in config.items() if k not in PYTHON_CLIENT_SETTINGS]
            self.native = module.NativeConsumer(settings)
        except self._error as e:
            raise _kafka_exception(e) from None

    def incremental_assign(self, partitions: list[Any]) -> None:
        self._call("incremental_assign", [(tp.topic, tp.partition, tp.offset) for tp in partitions])

    def incremental_unassign(self, partitions: list[Any]) -> None:
        self._call("incremental_unassign", [(tp.topic, tp.partition) for tp in partitions])

    def unassign(self) -> None:
        self._call("unassign")

    def get_watermark_offsets(self, tp: Any, timeout: float = 1.0, cached: bool = False) -> tuple[int, int]:
        result: tuple[int, int] = self._call(
            "watermarks", tp.topic, tp.partition, int(timeout * 1000), cached
        )
        return result

    def list_topics(self, topic: str, timeout: float) -> Any:
        partitions = self._call("partitions", topic, int(timeout * 1000))
        listed = SimpleNamespace(
            error=None if partitions is not None else "unknown topic or partition",
            partitions={p: None for p in partitions or ()},
        )
        return SimpleNamespace(topics={topic: listed})

    def queued(self) -> int:
        """Messages fetched and parsed that no ``consume_events`` has taken yet."""
        count: int = self._call("queued")
        return count

    def consume_events(self, wanted: int, timeout_s: float, include_headers: bool) -> list[tuple[Any, ...]]:
        events: list[tuple[Any, ...]] = self._call(
            "consume", wanted, int(timeout_s * 1000), include_headers, DEFAULT_BATCH_BYTES
        )
        return events

    def close(self) -> None:
        self.native.close()

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self.native, method)(*args)
        except self._error as e:
            raise _kafka_exception(e) from None


class _ErrorEvent:
    """An error from the compiled consumer with the ``Message`` methods ``_on_error`` reads."""

    __slots__ = ("_error", "_offset", "_partition", "_topic")

    def __init__(
        self, topic: str | None, partition: int, offset: int, code: int, text: str, fatal: bool
    ) -> None:
        from confluent_kafka import KafkaError

        self._topic, self._partition, self._offset = topic, partition, offset
        self._error = KafkaError(code, text, fatal=fatal)

    def error(self) -> Any:
        return self._error

    def topic(self) -> str | None:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset


class KafkaNativePartitionSplitReader(KafkaPartitionSplitReader):
    """``KafkaPartitionSplitReader`` whose fetches are Arrow batches from the compiled consumer.

    Threading: as the base class (the fetcher thread); the compiled consume releases the GIL.
    """

    DEFAULT_CONSUME_BATCH = NATIVE_CONSUME_BATCH

    _counting: tuple[str, int] | None = None
    """``(topic, records)`` of a task's single range whose first fetch is still to be counted
    (``fetch_sizing``)."""

    @staticmethod
    @override
    def _create_consumer(config: dict[str, Any]) -> Any:
        return _NativeConsumer(config)

    @override
    def handle_splits_changes(self, change: SplitsChange[KafkaPartitionSplit]) -> None:
        first = self._consumer is None
        super().handle_splits_changes(change)
        if first and isinstance(change, SplitsAddition) and self._bounded and len(self._splits) == 1:
            # a single range: the first fetch's records are all of its partition, so they count
            only = next(iter(self._splits.values()))
            self._counting = (only.tp[0], only.stop - only.next_offset)

    @override
    def _consume(self, wanted: int, out: RecordsBySplits[Any], finished: list[_Assigned]) -> None:
        from confluent_kafka import KafkaError, TopicPartition

        include_headers = self._options.include_headers
        if self._counting is not None:
            # one record as soon as the first fetch lands (librdkafka queues a fetch's messages of a
            # partition at once), then how many that fetch brought beyond it; counted only when it
            # brought more than the range holds, the waste a smaller fetch avoids (the queue may hold
            # one more event: the partition's end, when the fetch reached it)
            events = self._consumer.consume_events(1, POLL_TIMEOUT_S, include_headers)
            if events:
                topic, records = self._counting
                fetched = 1 + self._consumer.queued() if events[0][0] == "records" else 0
                if fetched > records + 1:
                    fetch_sizing.observe(topic, self._fetch_bytes, fetched)
                self._counting = None
        else:
            events = self._consumer.consume_events(wanted, POLL_TIMEOUT_S, include_headers)
        errors: list[_ErrorEvent] = []
        for event in events:
            match event[0]:
                case "records":
                    self._take(event[1], event[2], event[3], event[4], event[5], out, finished)
                case "eof":
                    errors.append(
                        _ErrorEvent(event[1], event[2], event[3], KafkaError._PARTITION_EOF, "", False)
                    )
                case _:
                    errors.append(_ErrorEvent(*event[1:]))
        for error in errors:  # after the records, as the Python reader
            self._on_error(error, finished, KafkaError, TopicPartition)

    def _take(
        self,
        topic: str,
        partition: int,
        first: int,
        last: int,
        batch: pa.RecordBatch,
        out: RecordsBySplits[Any],
        finished: list[_Assigned],
    ) -> None:
        """The part of one partition's run that belongs to its split: from next_offset, below stop."""
        sid = self._by_tp.get((topic, partition))
        a = self._splits.get(sid) if sid is not None else None
        if a is None or a in finished:
            return
        begin, end = 0, batch.num_rows
        stop = a.stop
        if first < a.next_offset or (stop != NO_STOPPING_OFFSET and last >= stop):
            offsets = batch.column(_OFFSET_COLUMN).to_numpy()
            begin = int(np.searchsorted(offsets, a.next_offset, "left"))
            if stop != NO_STOPPING_OFFSET and last >= stop:
                end = int(np.searchsorted(offsets, stop, "left"))
                finished.append(a)
            last = int(offsets[end - 1]) if end > begin else last
        if end > begin:
            part = batch if (begin, end) == (0, batch.num_rows) else batch.slice(begin, end - begin)
            a.next_offset = last + 1
            out.add_all(sid, [KafkaArrowRecords(topic, partition, part, last)])
        if self._done(a) and a not in finished:
            finished.append(a)
