"""The ``kinesis-unified`` sink: PutRecords in batches of up to 500 records / 5 MiB, at-least-once.

Rows need a ``data`` column (binary or string) and a partition key column (``partitionKey``, or the
one named by option ``partitionKeyColumn``). Entries that a PutRecords call reports as failed
(a partial failure, typically throttling) are sent again, after a backoff, until they succeed; a
task that fails after some calls succeeded is retried by Spark and writes those records again,
hence at-least-once.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import BinaryType, StringType, StructType
from typing_extensions import override

from connector_base import ConnectorError, InvalidOptionError
from connectors.kinesis.client import THROTTLING_ERRORS, error_code, kinesis_client
from connectors.kinesis.options import KinesisOptions

__all__ = ["KinesisBatchWriter", "KinesisStreamWriter", "PutRecordsBuffer", "validate_sink_schema"]

LOG = logging.getLogger(__name__)

MAX_RECORDS_PER_CALL = 500
MAX_BYTES_PER_CALL = 5 * 1024 * 1024
MAX_ATTEMPTS = 30


def validate_sink_schema(schema: StructType, options: KinesisOptions) -> str:
    """Check the ``data`` and partition key columns; return the partition key column's name."""
    names = {f.name: f for f in schema.fields}
    if "data" not in names or not isinstance(names["data"].dataType, BinaryType | StringType):
        raise InvalidOptionError(
            "data", None, f"a binary or string column named 'data' (columns: {sorted(names)})"
        )
    pk = options.partition_key_column or "partitionKey"
    if pk not in names or not isinstance(names[pk].dataType, StringType):
        raise InvalidOptionError(
            "partitionKeyColumn",
            options.partition_key_column,
            "a string column for the partition key: 'partitionKey' or the column named by partitionKeyColumn "
            f"(columns: {sorted(names)})",
        )
    return pk


@dataclass
class SinkCommitMessage(WriterCommitMessage):
    """What one task wrote."""

    records: int
    calls: int
    retried_entries: int


class PutRecordsBuffer:
    """Collects entries and sends them with PutRecords, retrying failed entries."""

    def __init__(self, options: KinesisOptions) -> None:
        self._options = options
        self._client = kinesis_client(options)
        self._entries: list[dict[str, Any]] = []
        self._bytes = 0
        self.records = 0
        self.calls = 0
        self.retried = 0

    def add(self, data: bytes, key: str) -> None:
        """Add one record (sends a full batch first when needed)."""
        size = len(data) + len(key.encode("utf-8"))
        if self._entries and (
            len(self._entries) >= MAX_RECORDS_PER_CALL or self._bytes + size > MAX_BYTES_PER_CALL
        ):
            self.flush()
        self._entries.append({"Data": data, "PartitionKey": key})
        self._bytes += size

    def flush(self) -> None:
        """Send what is buffered; returns when every entry succeeded."""
        from botocore.exceptions import ClientError

        pending = self._entries
        self._entries, self._bytes = [], 0
        delay = 0.05
        for _attempt in range(MAX_ATTEMPTS):
            if not pending:
                return
            try:
                self.calls += 1
                resp = self._client.put_records(**self._options.stream_args(), Records=pending)
            except ClientError as e:
                if error_code(e) not in THROTTLING_ERRORS:
                    raise ConnectorError(
                        f"PutRecords to stream {self._options.stream} failed: {error_code(e)}"
                    ) from e
                time.sleep(delay)
                delay = min(2.0, delay * 2)
                continue
            failed = [entry for entry, r in zip(pending, resp["Records"], strict=True) if "ErrorCode" in r]
            self.records += len(pending) - len(failed)
            if failed:
                self.retried += len(failed)
                LOG.debug("PutRecords: %d of %d entries failed, retrying", len(failed), len(pending))
                time.sleep(delay)
                delay = min(2.0, delay * 2)
            pending = failed
        if pending:
            raise ConnectorError(
                f"PutRecords to stream {self._options.stream}: {len(pending)} entries still "
                f"failing after {MAX_ATTEMPTS} attempts"
            )


def _write(options: KinesisOptions, key_column: str, batches: Iterator[pa.RecordBatch]) -> SinkCommitMessage:
    buffer = PutRecordsBuffer(options)
    for batch in batches:
        data_col = batch.column(batch.schema.get_field_index("data"))
        key_col = batch.column(batch.schema.get_field_index(key_column))
        if key_col.null_count:
            raise ConnectorError(f"column {key_column!r} holds a null partition key")
        if data_col.null_count:
            raise ConnectorError("column 'data' holds a null value")
        datas = data_col.to_pylist()
        keys = key_col.to_pylist()
        add = buffer.add
        for d, k in zip(datas, keys, strict=True):
            add(d.encode("utf-8") if isinstance(d, str) else d, k)
    buffer.flush()
    return SinkCommitMessage(buffer.records, buffer.calls, buffer.retried)


class KinesisBatchWriter(DataSourceArrowWriter):
    """``df.write.format("kinesis-unified")``."""

    def __init__(self, options: KinesisOptions, key_column: str) -> None:
        self._options = options
        self._key_column = key_column

    @override
    def write(self, iterator: Iterator[pa.RecordBatch]) -> SinkCommitMessage:
        return _write(self._options, self._key_column, iterator)


class KinesisStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("kinesis-unified")`` (at-least-once: a re-run batch writes again)."""

    def __init__(self, options: KinesisOptions, key_column: str) -> None:
        self._options = options
        self._key_column = key_column

    @override
    def write(self, iterator: Iterator[pa.RecordBatch]) -> SinkCommitMessage:
        return _write(self._options, self._key_column, iterator)

    @override
    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        LOG.info(
            "batch %d: wrote %d records",
            batchId,
            sum(m.records for m in messages if isinstance(m, SinkCommitMessage)),
        )

    @override
    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        LOG.warning("batch %d aborted; records already sent stay in the stream (at-least-once)", batchId)
