"""The ``pravega`` sink: ``df.write`` / ``writeStream`` write the ``event`` column to a stream.

Columns: ``event`` (binary or string, required) and ``routing_key`` (string, optional); other
columns are ignored, so a ``format("pravega")`` read can be written back as it is. With
``valueFormat`` (docs/formats.md) ``event`` is a struct, encoded with the writer schema the driver
fixed (``connectors.formats.writer_schemas``), as the Kafka sink encodes ``value``.

Writes go through the connector's own writer (:mod:`connectors.pravega.event_writer`,
:mod:`connectors.pravega.transactional_writer`): events land on the segments the official clients
would choose for their routing keys, and a resent append is deduplicated by the segment store.

* ``exactly_once=false`` (default): each task writes through a ``PravegaEventWriter`` and flushes
  (every event acknowledged) before it reports success. A retried task or re-run batch writes
  again: at least once.
* ``exactly_once=true``: each task writes into its own Pravega transaction and flushes it (every
  event acknowledged by the transaction segments); the driver commits all transactions of the job
  or micro-batch in ``commit()`` and aborts them in ``abort()``. A failed task attempt aborts its
  transaction, so retried tasks never duplicate events. In streaming, the driver first records the
  batch's transaction ids in a transaction log (``txn_log``: ``<checkpointLocation>/sinks/pravega``
  or ``transaction_log_dir``), so a batch that Spark re-runs after the driver died inside
  ``commit()`` keeps the transactions that committed and aborts their replayed twins.

Writer time (``noteTime.column``, a timestamp or long epoch-ms column): each task reports the
largest value it wrote, and once the job's or micro-batch's data is durable (at least once: every
task flushed; exactly once: every transaction ``COMMITTED``) the driver notes the largest under one
writer id (``noteTimestampFromWriter``) at the stream's tails, i.e. after every event written, as
Pravega's writers note a time at their position. The writer id is ``noteTime.writerId``, by default
one per streaming query's checkpoint location (else one per writer object). A time never goes back:
the driver notes the largest it has noted so far when a batch's is smaller. A batch write removes its
writer when done (the controller still counts its last time); a streaming query's writer stays until
it stops noting (Pravega then times it out). Transactions are not committed with a timestamp
(``Transaction.commit(timestamp)``): the controller notes each at its own merge position and writes
a watermark as soon as the first is merged, so the watermark's cut would precede the other
transactions' events of the same time (seen on Pravega 0.13).
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import BinaryType, LongType, StringType, StructType, TimestampNTZType, TimestampType
from typing_extensions import override

from connector_base import ConnectorError, InvalidOptionError
from connectors.formats.writer_schemas import PayloadEncoder, writer_encoder
from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.controller_client import shared_controller
from connectors.pravega.event_writer import PravegaEventWriter
from connectors.pravega.options import PravegaSinkOptions
from connectors.pravega.transactional_writer import (
    PravegaTransaction,
    PravegaTransactionalWriter,
    commit_transaction,
)
from connectors.pravega.txn_log import TransactionLog

__all__ = [
    "PravegaBatchWriter",
    "PravegaCommitMessage",
    "PravegaStreamWriter",
    "ensure_stream",
    "validate_sink_schema",
    "write_batches",
]

LOG = logging.getLogger(__name__)

COMMITTED_TIMEOUT_S = 120.0
"""How long committed transactions may take to be merged (``COMMITTING`` to ``COMMITTED``)."""


def validate_sink_schema(
    schema: StructType, note_time_column: str | None = None, encoded: bool = False
) -> None:
    """Fail early (on the driver) when the columns cannot be written (``encoded``: ``valueFormat`` is
    set, so ``event`` is a struct encoded with the writer schema)."""
    types = {f.name.lower(): f.dataType for f in schema.fields}
    if note_time_column is not None:
        found = types.get(note_time_column.lower())
        if not isinstance(found, TimestampType | TimestampNTZType | LongType):
            what = "is not a column" if found is None else f"is {found.simpleString()}"
            raise InvalidOptionError(
                "noteTime.column",
                note_time_column,
                f"a timestamp or long (epoch ms) column of the written rows ({note_time_column!r} {what}; "
                f"columns: {sorted(types)})",
            )
    if "event" not in types:
        raise ConnectorError("the pravega sink needs an 'event' column (binary or string)")
    if encoded:
        if not isinstance(types["event"], StructType):
            raise ConnectorError(
                "column 'event' must be a struct of the writer schema's fields when valueFormat is set, "
                f"not {types['event'].simpleString()}"
            )
    elif not isinstance(types["event"], BinaryType | StringType):
        raise ConnectorError(f"column 'event' must be binary or string, not {types['event'].simpleString()}")
    if "routing_key" in types and not isinstance(types["routing_key"], StringType):
        raise ConnectorError(
            f"column 'routing_key' must be a string, not {types['routing_key'].simpleString()}"
        )


def ensure_stream(options: PravegaSinkOptions) -> None:
    """Create the scope / stream when allowed; otherwise fail unless the stream exists."""
    controller = shared_controller(options.connection)
    if controller.stream_exists(options.scope, options.stream):
        return
    if not options.allow_create_stream:
        raise ConnectorError(
            f"Pravega stream {options.scope}/{options.stream} does not exist; set allow_create_stream=true "
            "(and allow_create_scope=true for a new scope) to create it"
        )
    if options.allow_create_scope:
        controller.create_scope(options.scope)
    try:
        controller.create_stream(options.scope, options.stream, options.segments)
    except ConnectorError as e:
        LOG.warning("createStream %s/%s failed: %s", options.scope, options.stream, e)
    if not controller.stream_exists(options.scope, options.stream):
        raise ConnectorError(
            f"could not create {options.scope}/{options.stream} (does scope {options.scope} exist? "
            "set allow_create_scope=true)"
        )


@dataclass
class PravegaCommitMessage(WriterCommitMessage):
    """What a task wrote: events, bytes, and its open transaction (exactly-once mode)."""

    events: int
    txn_id: int | None = None
    max_time_ms: int | None = None
    """The largest ``noteTime.column`` value the task wrote (epoch ms), when the option is set."""


def _columns(batch: pa.RecordBatch, encoder: PayloadEncoder | None) -> tuple[list[Any], list[Any] | None]:
    names = [n.lower() for n in batch.schema.names]
    events = batch.column(names.index("event"))
    keys = batch.column(names.index("routing_key")).to_pylist() if "routing_key" in names else None
    if encoder is not None:
        return encoder.encode(events, "event"), keys
    if pa.types.is_string(events.type) or pa.types.is_large_string(events.type):
        events = events.cast(pa.binary())
    return events.to_pylist(), keys


def _max_time_ms(batch: pa.RecordBatch, column: str) -> int | None:
    """The largest value of ``column`` (a timestamp or epoch-ms long) in epoch ms; ``None`` if all null."""
    names = [n.lower() for n in batch.schema.names]
    values = batch.column(names.index(column.lower()))
    if pa.types.is_timestamp(values.type):
        values = pc.cast(values, pa.timestamp("ms", values.type.tz)).cast(pa.int64())
    top = pc.max(values).as_py()
    return None if top is None else int(top)


def _write_all(
    target: PravegaEventWriter | PravegaTransaction,
    batches: Iterator[pa.RecordBatch],
    options: PravegaSinkOptions,
) -> tuple[int, int | None]:
    count = 0
    top: int | None = None
    time_column = options.note_time_column
    encoder = None if options.writer_schema is None else writer_encoder(options.writer_schema)
    for batch in batches:
        events, keys = _columns(batch, encoder)
        if None in events:
            raise ConnectorError("the 'event' column holds a null; Pravega events cannot be null")
        target.write_many(events, keys)
        count += len(events)
        if time_column is not None and batch.num_rows:
            t = _max_time_ms(batch, time_column)
            top = t if top is None or (t is not None and t > top) else top
    return count, top


def write_batches(options: PravegaSinkOptions, batches: Iterator[pa.RecordBatch]) -> PravegaCommitMessage:
    """Write every row of one task; in exactly-once mode into a transaction left open for the driver."""
    if not options.exactly_once:
        writer = PravegaEventWriter(options.connection, options.scope, options.stream)
        try:
            count, top = _write_all(writer, batches, options)
            writer.flush()
        finally:
            writer.abandon()
        return PravegaCommitMessage(count, max_time_ms=top)
    txn = PravegaTransactionalWriter(options.connection, options.scope, options.stream).begin()
    try:
        count, top = _write_all(txn, batches, options)
        txn.flush()
    except BaseException:
        txn.close()
        try:
            shared_controller(options.connection).end_txn(
                options.scope, options.stream, txn.txn_id, commit=False
            )
        except Exception as e:  # the original error matters more
            LOG.warning("could not abort transaction %032x: %s", txn.txn_id, e)
        raise
    txn.close()
    return PravegaCommitMessage(count, txn.txn_id, top)


def _batch_time(messages: list[WriterCommitMessage | None]) -> int | None:
    """The largest time a job's or micro-batch's tasks wrote (``None``: none, or no ``noteTime.column``)."""
    times = [
        m.max_time_ms for m in messages if isinstance(m, PravegaCommitMessage) and m.max_time_ms is not None
    ]
    return max(times) if times else None


class _WriterTime:
    """The driver's side of ``noteTime.column``: one writer id, and times that never go back."""

    def __init__(self, options: PravegaSinkOptions, streaming: bool) -> None:
        self.options = options
        self.noted: int | None = None
        explicit, checkpoint = options.note_time_writer_id, options.checkpoint_location
        if explicit is not None:
            self.writer_id = explicit
        elif streaming and checkpoint:  # the same writer across restarts of the query
            self.writer_id = "sparkflow-sink-" + hashlib.sha256(checkpoint.encode()).hexdigest()[:24]
        else:
            self.writer_id = f"sparkflow-sink-{uuid.uuid4()}"

    def next_time(self, messages: list[WriterCommitMessage | None]) -> int | None:
        """The time to note for this batch (the largest so far), or ``None`` when not noting."""
        if self.options.note_time_column is None:
            return None
        t = _batch_time(messages)
        if t is None:
            return None
        self.noted = t if self.noted is None else max(self.noted, t)
        return self.noted

    def note_at_tails(self, t: int) -> None:
        """Note ``t`` at the stream's tails (once the batch is durable: flushed, or committed)."""
        o = self.options
        controller = shared_controller(o.connection)
        client = PravegaClusterClient(o.connection)
        try:
            position = {
                s.segment_id: client.info(o.scope, o.stream, s.segment_id).tail
                for s in controller.current_segments(o.scope, o.stream)
            }
        finally:
            client.close()
        answer = controller.note_timestamp(o.scope, o.stream, self.writer_id, t, position)
        if answer != "SUCCESS":  # the data is written; only the watermark waits for a later time
            LOG.warning(
                "noteTimestampFromWriter %d for %s on %s/%s answered %s",
                t,
                self.writer_id,
                o.scope,
                o.stream,
                answer,
            )

    def remove(self) -> None:
        """A batch write is done: the controller stops waiting for this writer (it keeps its last time)."""
        if self.noted is not None:
            shared_controller(self.options.connection).remove_writer(
                self.options.scope, self.options.stream, self.writer_id
            )


def _finish(options: PravegaSinkOptions, messages: list[WriterCommitMessage | None], commit: bool) -> int:
    controller = shared_controller(options.connection)
    total = 0
    committed: list[int] = []
    for m in messages:
        if not isinstance(m, PravegaCommitMessage):
            continue
        total += m.events
        if m.txn_id is None:
            continue
        if commit:
            commit_transaction(options.connection, options.scope, options.stream, m.txn_id)
            committed.append(m.txn_id)
            continue
        try:
            controller.end_txn(options.scope, options.stream, m.txn_id, commit=False)
        except ConnectorError:
            state = controller.txn_state(options.scope, options.stream, m.txn_id)
            if state != "ABORTED":
                LOG.warning("abort of transaction %032x: state %s", m.txn_id, state)
    _await_committed(options, committed)
    return total


def _await_committed(options: PravegaSinkOptions, txn_ids: list[int]) -> None:
    """Wait until every transaction is ``COMMITTED``: the controller answers a commit once it is
    ``COMMITTING`` and merges the transaction segments later, so a write that returned earlier could
    be read back without them (read-your-writes after ``save()``, and a next micro-batch's reader)."""
    controller = shared_controller(options.connection)
    deadline = time.monotonic() + COMMITTED_TIMEOUT_S
    pending = list(txn_ids)
    while pending:
        txn = pending[0]
        state = controller.txn_state(options.scope, options.stream, txn)
        if state == "COMMITTED":
            pending.pop(0)
            continue
        where = f"transaction {txn:032x} on {options.scope}/{options.stream}"
        if state in ("ABORTING", "ABORTED"):
            raise ConnectorError(f"{where} was {state} after its commit was accepted")
        if time.monotonic() > deadline:
            raise ConnectorError(f"{where} is still {state} {COMMITTED_TIMEOUT_S:.0f} s after its commit")
        time.sleep(0.05)


class PravegaBatchWriter(DataSourceArrowWriter):
    """``df.write.format("pravega")``."""

    def __init__(self, options: PravegaSinkOptions, schema: StructType) -> None:
        self._options = options
        ensure_stream(options)
        self._time = _WriterTime(options, streaming=False)

    @override
    def write(self, iterator: Iterator[pa.RecordBatch]) -> PravegaCommitMessage:
        return write_batches(self._options, iterator)

    @override
    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        total = _commit_and_note(self._options, self._time, messages)
        self._time.remove()
        LOG.info("wrote %d events to %s/%s", total, self._options.scope, self._options.stream)

    @override
    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        _finish(self._options, messages, commit=False)


def _commit_and_note(
    options: PravegaSinkOptions,
    writer_time: _WriterTime,
    messages: list[WriterCommitMessage | None],
    to_commit: list[WriterCommitMessage | None] | None = None,
) -> int:
    """Commit ``to_commit`` (default: ``messages``) and note the batch's time (``noteTime.column``)."""
    t = writer_time.next_time(messages)
    total = _finish(options, messages if to_commit is None else to_commit, commit=True)
    if t is not None:
        writer_time.note_at_tails(t)
    return total


_COMMITTED = ("COMMITTED", "COMMITTING")


def _resolve_replay(
    options: PravegaSinkOptions, recorded: list[int | None], replayed: list[int | None], batch_id: int
) -> list[int | None]:
    """The transactions to commit for a re-run batch: per task, the recorded one unless it was aborted."""
    controller = shared_controller(options.connection)

    def state(txn: int | None) -> str:
        return "NONE" if txn is None else controller.txn_state(options.scope, options.stream, txn)

    states = [state(t) for t in recorded]
    if len(recorded) == len(replayed):
        return [
            old if st in (*_COMMITTED, "OPEN") else new
            for old, new, st in zip(recorded, replayed, states, strict=True)
        ]
    done = [st in _COMMITTED for st, t in zip(states, recorded, strict=True) if t is not None]
    if all(done):
        return list(recorded)
    if not any(done):
        return list(replayed)
    raise ConnectorError(
        f"batch {batch_id} re-ran with {len(replayed)} tasks where the transaction log records "
        f"{len(recorded)}, and only some recorded transactions committed ({states}): the events of "
        "the others cannot be matched to the re-run tasks"
    )


class PravegaStreamWriter(DataSourceStreamArrowWriter):
    """``writeStream.format("pravega")`` (see the module docstring for the guarantee)."""

    def __init__(self, options: PravegaSinkOptions, schema: StructType) -> None:
        self._options = options
        ensure_stream(options)
        self._time = _WriterTime(options, streaming=True)
        if options.exactly_once and options.transaction_log_dir is None:
            LOG.warning(
                "exactly_once without a checkpointLocation option or transaction_log_dir: a batch "
                "re-run after the driver died inside commit() is written twice"
            )

    @override
    def write(self, iterator: Iterator[pa.RecordBatch]) -> PravegaCommitMessage:
        return write_batches(self._options, iterator)

    @override
    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        directory = self._options.transaction_log_dir
        if not self._options.exactly_once or directory is None:
            total = _commit_and_note(self._options, self._time, messages)
            LOG.info("batch %d: wrote %d events", batchId, total)
            return
        log = TransactionLog(Path(directory))
        replayed = [m.txn_id if isinstance(m, PravegaCommitMessage) else None for m in messages]
        recorded = log.get(batchId)
        chosen = replayed if recorded is None else _resolve_replay(self._options, recorded, replayed, batchId)
        if chosen != recorded:
            log.put(batchId, chosen)  # durable before anything is committed
        keep = {t for t in chosen if t is not None}
        if recorded is not None:
            LOG.warning(
                "batch %d re-ran after its commit had started: committing %d recorded or replacing "
                "transactions, aborting %d replayed ones",
                batchId,
                len(keep),
                sum(1 for t in replayed if t is not None and t not in keep),
            )
        _commit_and_note(self._options, self._time, messages, [PravegaCommitMessage(0, t) for t in chosen])
        _finish(self._options, [PravegaCommitMessage(0, t) for t in replayed if t not in keep], commit=False)
        log.prune(batchId)
        LOG.info("batch %d: wrote %d events", batchId, sum(getattr(m, "events", 0) for m in messages))

    @override
    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        _finish(self._options, messages, commit=False)
