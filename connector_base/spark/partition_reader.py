"""Executor side of the bridge: read exactly the planned splits with a ``SourceReader``."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from connector_base.client_pool import close_all_idle
from connector_base.errors import ConnectorError
from connector_base.gc_tuning import bulk_read_gc, freeze_imported_objects
from connector_base.malloc_tuning import retain_freed_memory
from connector_base.source import Source
from connector_base.source_reader import InputStatus, SourceReaderContext
from connector_base.spark.arrow_output import DEFAULT_BATCH_ROWS, ArrowBatchOutput

__all__ = ["forget_pooled_clients_on_retry", "read_splits_as_arrow"]

LOG = logging.getLogger(__name__)

AVAILABILITY_WAIT_S = 1.0
"""How long one wait for data lasts before the reader is polled again (errors surface then)."""
STALL_TIMEOUT_S = 600.0
"""A planned range that yields nothing for this long fails the task instead of hanging it."""
PROGRESS_EVERY_ROWS = 1_000_000
"""A task logs its progress (INFO) each time it has read this many more rows, and when it ends."""


def read_splits_as_arrow(
    source: Source[Any, Any, Any],
    splits: Sequence[Any],
    schema: pa.Schema,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    reader_config: dict[str, Any] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Run a reader over ``splits`` (each bounded to its planned range) and yield Arrow batches."""
    import time

    forget_pooled_clients_on_retry(_task_attempt())
    freeze_imported_objects()  # out of the collection Spark's reused worker runs after each task
    retain_freed_memory()  # the next fetch reuses this one's freed buffers: see malloc_tuning
    with bulk_read_gc():  # records arrive in bulk: see gc_tuning
        context = SourceReaderContext(subtask_id=0, parallelism=1, config=dict(reader_config or {}))
        reader = source.create_reader(context)
        output = ArrowBatchOutput(schema, batch_rows)
        try:
            reader.start()
            reader.add_splits(list(splits))
            reader.notify_no_more_splits()
            idle_since: float | None = None
            started, rows, next_report = time.monotonic(), 0, PROGRESS_EVERY_ROWS
            while True:
                status = reader.poll_next(output)
                for batch in output.drain():
                    rows += batch.num_rows
                    yield batch
                if rows >= next_report:
                    next_report = rows + PROGRESS_EVERY_ROWS
                    LOG.info("%s: %d rows read in %.1f s", _names(splits), rows, time.monotonic() - started)
                if status is InputStatus.END_OF_INPUT:
                    break
                if status is InputStatus.NOTHING_AVAILABLE:
                    now = time.monotonic()
                    idle_since = idle_since or now
                    if now - idle_since > STALL_TIMEOUT_S:
                        raise ConnectorError(
                            f"reading splits {[s.split_id for s in splits]} made no progress "
                            f"for {STALL_TIMEOUT_S}s"
                        )
                    try:
                        reader.is_available().result(timeout=AVAILABILITY_WAIT_S)
                    except TimeoutError:
                        pass
                else:
                    idle_since = None
            for batch in output.finish():
                rows += batch.num_rows
                yield batch
            LOG.info("%s: done, %d rows in %.1f s", _names(splits), rows, time.monotonic() - started)
        finally:
            reader.close()


def _names(splits: Sequence[Any]) -> str:
    ids = [str(s.split_id) for s in splits]
    return ", ".join(ids) if len(ids) <= 3 else f"{ids[0]} and {len(ids) - 1} more splits"


def _task_attempt() -> int:
    """The running Spark task's attempt number (0 outside a task)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    return int(context.attemptNumber()) if context is not None else 0


def forget_pooled_clients_on_retry(attempt: int) -> int:
    """On a retried task (``attempt`` > 0) close this worker's idle pooled clients; how many.

    A task that failed may have failed on a pooled client (its connections dead, its state broken);
    Spark's Kafka source invalidates its cached consumers on a task's second attempt for the same
    reason. The retry then connects afresh.
    """
    if attempt <= 0:
        return 0
    closed = close_all_idle()
    if closed:
        LOG.info("task attempt %d: closed %d idle pooled clients before reading", attempt, closed)
    return closed
