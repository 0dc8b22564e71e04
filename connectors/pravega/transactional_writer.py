"""``PravegaTransactionalWriter``: writes events into Pravega transactions on the connector's clients.

``begin()`` asks the controller to open a transaction (``createTransaction`` with a lease): the
answer names the transaction id and the segments of the epoch it writes to; each has a transaction
segment ``<segment>#transaction.<id as 32 hex digits>`` on the same segment store. Events are routed
over those segments by routing key (:class:`~connectors.pravega.event_router.EventRouter`) and
appended by :class:`~connectors.pravega.segment_writer.SegmentWriter`, so resends are deduplicated
as for plain writes. ``flush()`` waits for every acknowledgement. ``commit()`` / ``abort()`` end
the transaction through the controller; a committed transaction's segments are merged into the
stream atomically (``COMMITTING`` then ``COMMITTED``), an aborted one's are dropped.

Leases: the controller aborts a transaction whose lease runs out. The writer pings
(``pingTransaction``) from its own calls once a third of the lease has passed since the last ping;
between the last write and the commit nothing pings, so ``lease_ms`` must cover that gap (the sink's
driver commits after the job's other tasks finish). The controller caps leases (0.13 standalone:
``controller.transaction.lease.count.max`` default 120 s); ``lease_ms`` above it fails ``begin()``.

Threading: one transaction is used by one thread.
"""

from __future__ import annotations

import time

from connector_base import ConnectorError
from connectors.pravega.controller_client import (
    ConnectionSettings,
    SegmentRange,
    segment_name,
    shared_controller,
)
from connectors.pravega.event_router import EventRouter
from connectors.pravega.network_retry import NetworkRetry
from connectors.pravega.segment_store_client import tls_context
from connectors.pravega.segment_writer import SegmentSealedError, SegmentWriter

__all__ = [
    "DEFAULT_LEASE_MS",
    "PravegaTransaction",
    "PravegaTransactionalWriter",
    "commit_transaction",
    "transaction_segment",
]

DEFAULT_LEASE_MS = 90_000
"""The official Rust client's transaction lease."""
COMMITTED_TIMEOUT_S = 120.0
"""How long ``commit(wait=True)`` waits for ``COMMITTED``."""


def transaction_segment(scope: str, stream: str, segment_id: int, txn_id: int) -> str:
    """The name of a transaction's segment beside ``segment_id``."""
    return f"{segment_name(scope, stream, segment_id)}#transaction.{txn_id:032x}"


class PravegaTransaction:
    """One open transaction (see the module docstring)."""

    def __init__(
        self,
        settings: ConnectionSettings,
        scope: str,
        stream: str,
        txn_id: int,
        segments: list[SegmentRange],
        token: str,
        lease_ms: int,
    ) -> None:
        self.settings = settings
        self.scope = scope
        self.stream = stream
        self.txn_id = txn_id
        self.lease_ms = lease_ms
        self._controller = shared_controller(settings)
        self._router = EventRouter(segments)
        tls = tls_context(settings.tls_enabled, settings.trust_store)
        controller = self._controller

        def writer(seg_id: int) -> SegmentWriter:
            return SegmentWriter(
                transaction_segment(scope, stream, seg_id, txn_id),
                endpoint=lambda: controller.endpoint(scope, stream, seg_id),
                token=lambda: token,
                read_timeout_s=settings.read_timeout_ms / 1000.0,
                network_timeout_ms=settings.network_timeout_ms,
                tls=tls,
            )

        self._writers = [writer(s.segment_id) for s in self._router.segments]
        self._pinged = time.monotonic()
        self.events = 0

    def __repr__(self) -> str:
        return f"PravegaTransaction({self.scope}/{self.stream}, {self.txn_id:032x})"

    def _sealed(self, e: SegmentSealedError) -> ConnectorError:
        return ConnectorError(
            f"transaction {self.txn_id:032x} on {self.scope}/{self.stream}: its segment {e.segment} "
            "was sealed "
            "(the transaction was committed or aborted, or its lease ran out)"
        )

    @property
    def reconnects(self) -> int:
        """How often the transaction segments' connections were made again after a failure."""
        return sum(w.stats.reconnects for w in self._writers)

    @property
    def held_at_setup(self) -> int:
        """Events a reconnect found held by the store without their acknowledgement (not resent)."""
        return sum(w.stats.held_at_setup for w in self._writers)

    def ping(self) -> None:
        """Extend the lease by ``lease_ms``; raise if the transaction is no longer open."""
        answer = self._controller.ping_txn(self.scope, self.stream, self.txn_id, self.lease_ms)
        self._pinged = time.monotonic()
        if answer != "OK":
            raise ConnectorError(
                f"pingTransaction of {self.txn_id:032x} on {self.scope}/{self.stream} answered {answer}"
            )

    def _maybe_ping(self) -> None:
        if (time.monotonic() - self._pinged) * 1000.0 > self.lease_ms / 3:
            self.ping()

    def write(self, payload: bytes, routing_key: str | None = None) -> None:
        """Write one event into the transaction."""
        self.write_many([payload], None if routing_key is None else [routing_key])

    def write_many(self, payloads: list[bytes], routing_keys: list[str | None] | None = None) -> None:
        """Write events in order (``routing_keys``: one per event, or ``None``)."""
        self._maybe_ping()
        writers, index_of = self._writers, self._router.index_of
        try:
            if routing_keys is None:
                for payload in payloads:
                    writers[index_of(None)].append(payload, None)
            else:
                for payload, key in zip(payloads, routing_keys, strict=True):
                    writers[index_of(key)].append(payload, key)
        except SegmentSealedError as e:
            raise self._sealed(e) from e
        self.events += len(payloads)

    def flush(self) -> None:
        """Return once the segment store has acknowledged every event written."""
        self._maybe_ping()
        try:
            for writer in self._writers:
                writer.flush()
        except SegmentSealedError as e:
            raise self._sealed(e) from e

    def close(self) -> None:
        """Close the connections (the transaction stays open until committed, aborted or its lease ends)."""
        for writer in self._writers:
            writer.close()

    def state(self) -> str:
        """The controller's state of the transaction (``OPEN``, ``COMMITTING``, ``COMMITTED``, ...)."""
        return self._controller.txn_state(self.scope, self.stream, self.txn_id)

    def commit(self, wait: bool = True) -> None:
        """Flush, commit, and (``wait``) return once the transaction is ``COMMITTED``."""
        self.flush()
        self.close()
        commit_transaction(self.settings, self.scope, self.stream, self.txn_id)
        if wait:
            deadline = time.monotonic() + COMMITTED_TIMEOUT_S
            while (state := self.state()) != "COMMITTED":
                if state in ("ABORTING", "ABORTED") or time.monotonic() > deadline:
                    raise ConnectorError(
                        f"transaction {self.txn_id:032x} on {self.scope}/{self.stream} is {state} "
                        "after its commit"
                    )
                time.sleep(0.05)

    def abort(self) -> None:
        """Abort: nothing written in the transaction becomes readable."""
        self.close()
        self._controller.end_txn(self.scope, self.stream, self.txn_id, commit=False)


def commit_transaction(settings: ConnectionSettings, scope: str, stream: str, txn_id: int) -> None:
    """Commit a transaction; return once the controller has taken the commit (``COMMITTING``).

    A commit that fails is checked: ``COMMITTING`` or ``COMMITTED`` means it was taken (only the
    answer was lost or late); ``OPEN`` means it was not (after a segment store restart the
    controller takes commits only once its own writers to its commit stream have reconnected, which
    took more than 5 s in a test), and it is sent again with backoff within ``networkTimeoutMs``: a
    commit is idempotent, and its caller decided to commit. Any other state fails, naming it.
    """
    controller = shared_controller(settings)
    where = f"transaction {txn_id:032x} on {scope}/{stream}"
    retry = NetworkRetry(
        f"controller commitTransaction of {where}", settings.target, settings.network_timeout_ms
    )
    while True:
        retry.attempt()
        try:
            controller.end_txn(scope, stream, txn_id, commit=True)
            return
        except ConnectorError as e:
            state = controller.txn_state(scope, stream, txn_id)
            if state in ("COMMITTING", "COMMITTED"):
                return
            if state != "OPEN":
                raise ConnectorError(
                    f"{where}: the commit failed ({e}) and the transaction is {state}"
                ) from e
            retry.failed(e)


class PravegaTransactionalWriter:
    """Opens transactions on one stream."""

    def __init__(
        self, settings: ConnectionSettings, scope: str, stream: str, lease_ms: int = DEFAULT_LEASE_MS
    ) -> None:
        self.settings = settings
        self.scope = scope
        self.stream = stream
        self.lease_ms = lease_ms

    def begin(self) -> PravegaTransaction:
        """Open a transaction."""
        controller = shared_controller(self.settings)
        txn_id, segments, token = controller.create_txn(self.scope, self.stream, self.lease_ms)
        if not segments:
            raise ConnectorError(
                f"createTransaction on {self.scope}/{self.stream} answered no segments "
                "(is the stream sealed?)"
            )
        return PravegaTransaction(
            self.settings, self.scope, self.stream, txn_id, segments, token, self.lease_ms
        )
