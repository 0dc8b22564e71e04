"""The ``kafka-unified`` sink: ``df.write`` and ``writeStream`` produce rows to Kafka, at least once.

Columns: ``value`` (required, binary or string), ``key``, ``topic``, ``partition``, ``headers``
(``array<struct<key: string, value: binary>>``); the ``topic`` option, when set, overrides the
column (as Spark). Every task waits for the delivery report of each record it produced; the first
failed delivery fails the task with the broker's reason, so Spark retries it (at least once).

Two producing paths, chosen by ``kafka.writer`` (``reader_choice.py``): the compiled one
(``native_sink.py``: Arrow columns into librdkafka, no Python object per record) and the
confluent-kafka one (``python_sink.py``); both wait for deliveries with ``deliveries.py``. Options and
the accepted columns: ``sink_options.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from typing_extensions import override

from connectors.kafka.native_sink import produce_batches_native
from connectors.kafka.python_sink import produce_batches
from connectors.kafka.reader_choice import KafkaWriter
from connectors.kafka.sink_options import KafkaSinkOptions, validate_sink_schema

__all__ = [
    "KafkaBatchWriter",
    "KafkaSinkOptions",
    "KafkaStreamWriter",
    "validate_sink_schema",
]

LOG = logging.getLogger(__name__)


def _produce(options: KafkaSinkOptions, batches: Iterator[pa.RecordBatch]) -> int:
    """Every row through ``kafka.writer``'s producing path; the number of records delivered."""
    if options.writer is KafkaWriter.NATIVE:
        return produce_batches_native(options, batches)
    return produce_batches(options, batches)


@dataclass
class KafkaCommitMessage(WriterCommitMessage):
    """What a task wrote."""

    records: int


class KafkaBatchWriter(DataSourceArrowWriter):
    """``df.write.format("kafka-unified")``."""

    def __init__(self, options: KafkaSinkOptions) -> None:
        self._options = options

    @override
    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:
        return KafkaCommitMessage(_produce(self._options, iterator))

    @override
    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        LOG.info(
            "wrote %d records to Kafka", sum(m.records for m in messages if isinstance(m, KafkaCommitMessage))
        )


class KafkaStreamWriter(DataSourceStreamArrowWriter):
    """``writeStream.format("kafka-unified")`` (at least once: a re-run micro-batch produces again)."""

    def __init__(self, options: KafkaSinkOptions) -> None:
        self._options = options

    @override
    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:
        return KafkaCommitMessage(_produce(self._options, iterator))

    @override
    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        LOG.info(
            "batch %d: wrote %d records",
            batchId,
            sum(m.records for m in messages if isinstance(m, KafkaCommitMessage)),
        )

    @override
    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        LOG.warning("batch %d aborted; records already delivered stay in Kafka (at-least-once)", batchId)
