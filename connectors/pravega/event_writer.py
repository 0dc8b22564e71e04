"""``PravegaEventWriter``: writes events to a stream on the connector's own Pravega clients.

Events are routed by routing key (:class:`~connectors.pravega.event_router.EventRouter`, the
official clients' hash) to the segments of the stream's current epoch, and appended per segment by
a :class:`~connectors.pravega.segment_writer.SegmentWriter` (ordered, numbered, resends
deduplicated by the segment store). ``flush()`` returns once the segment store has acknowledged
every event written so far (acknowledged appends are durable).

Scaling: when a segment answers ``SegmentIsSealed``, the writer asks the controller for the
stream's current segments, routes the sealed segment's unacknowledged events again, in their order,
and goes on. Pravega's readers read a successor only after its predecessors, so the order per
routing key holds across the scale.

Writer time (watermarks): ``note_time(t)`` flushes and tells the controller
(``noteTimestampFromWriter``) that everything this writer wrote up to its current position has
event time ``<= t``, as Pravega's Java writer does; the controller combines the marks of all writers
into the stream's watermarks (the ``_MARK<stream>`` stream). ``close()`` removes the writer from the
watermark computation when it noted a time.

Threading: one writer is used by one thread.
"""

from __future__ import annotations

import logging
import time
import uuid

from connector_base import ConnectorError
from connectors.pravega.controller_client import (
    ConnectionSettings,
    ControllerClient,
    SegmentRange,
    delegation_token,
    segment_name,
    shared_controller,
)
from connectors.pravega.event_router import EventRouter
from connectors.pravega.segment_store_client import tls_context
from connectors.pravega.segment_writer import SegmentSealedError, SegmentWriter

__all__ = ["PravegaEventWriter"]

LOG = logging.getLogger(__name__)

MAX_RESCALES = 100
"""How many successive seals one write may follow before the writer gives up (a stream sealed for
good answers sealed forever)."""
SEAL_POLL_S = 0.1
"""How often the controller is asked whether a sealed segment's successors are current."""


class PravegaEventWriter:
    """Writes events to one stream (see the module docstring)."""

    def __init__(
        self, settings: ConnectionSettings, scope: str, stream: str, writer_name: str | None = None
    ) -> None:
        self.settings = settings
        self.scope = scope
        self.stream = stream
        self.writer_name = writer_name or f"sparkflow-{uuid.uuid4()}"
        self._controller: ControllerClient = shared_controller(settings)
        self._tls = tls_context(settings.tls_enabled, settings.trust_store)
        self._token = ""
        self._noted = False
        self._writers: list[SegmentWriter] = []
        self._router: EventRouter = EventRouter([SegmentRange(0, 0.0, 1.0)])
        self._refresh(self._controller.current_segments(scope, stream))

    # --- segments --------------------------------------------------------------------------------
    def _segment_writer(self, segment: SegmentRange) -> SegmentWriter:
        controller, scope, stream, seg_id = self._controller, self.scope, self.stream, segment.segment_id
        return SegmentWriter(
            segment_name(scope, stream, seg_id),
            endpoint=lambda: controller.endpoint(scope, stream, seg_id),
            token=self._delegation_token,
            read_timeout_s=self.settings.read_timeout_ms / 1000.0,
            network_timeout_ms=self.settings.network_timeout_ms,
            tls=self._tls,
        )

    def _delegation_token(self) -> str:
        if self.settings.auth_enabled and not self._token:
            self._token = delegation_token(self._controller, self.scope, self.stream)
        return self._token

    def _refresh(self, segments: list[SegmentRange]) -> list[tuple[str | None, bytes]]:
        """Route to ``segments``: keep the writers of segments that stay, open the others.

        Writers of segments no longer current are flushed; the events their sealed segments did not
        take are returned, to be routed again.
        """
        if not segments:
            raise ConnectorError(f"Pravega stream {self.scope}/{self.stream} has no open segments (sealed?)")
        old = {seg.segment_id: w for seg, w in zip(self._router.segments, self._writers, strict=False)}
        router = EventRouter(segments)
        writers = [old.pop(s.segment_id, None) or self._segment_writer(s) for s in router.segments]
        resend: list[tuple[str | None, bytes]] = []
        for gone in old.values():
            try:
                gone.flush()
            except SegmentSealedError as sealed:
                resend.extend(sealed.unacked)
            finally:
                gone.close()
        self._router, self._writers = router, writers
        return resend

    def _successor_epoch(self, sealed_id: int) -> list[SegmentRange]:
        """The controller's current segments once ``sealed_id`` is no longer among them."""
        deadline = time.monotonic() + self.settings.network_timeout_ms / 1000.0
        while True:
            current = self._controller.current_segments(self.scope, self.stream)
            if all(s.segment_id != sealed_id for s in current):
                return current
            if time.monotonic() > deadline:
                raise ConnectorError(
                    f"segment {segment_name(self.scope, self.stream, sealed_id)} is sealed but the "
                    "controller "
                    f"still lists it as current after networkTimeoutMs={self.settings.network_timeout_ms} "
                    f"(is {self.scope}/{self.stream} sealed?)"
                )
            time.sleep(SEAL_POLL_S)

    def _rescale(self, sealed: SegmentSealedError) -> None:
        """A segment sealed: route again from the controller's current segments, resend in order."""
        pending = list(sealed.unacked)
        for _attempt in range(MAX_RESCALES):
            index = next(i for i, w in enumerate(self._writers) if w.segment == sealed.segment)
            sealed_id = self._router.segments[index].segment_id
            self._writers[index].close()
            self._writers[index] = _SealedWriter(sealed.segment)  # type: ignore[assignment]
            pending.extend(self._refresh(self._successor_epoch(sealed_id)))
            LOG.info(
                "segment %s sealed: resending %d events to %s",
                sealed.segment,
                len(pending),
                [s.segment_id for s in self._router.segments],
            )
            try:
                for key, payload in pending:
                    self._writers[self._router.index_of(key)].append(payload, key)
                return
            except SegmentSealedError as again:
                sealed = again
                pending = list(again.unacked)
        raise ConnectorError(f"{self.scope}/{self.stream}: more than {MAX_RESCALES} seals in a row")

    # --- writing -----------------------------------------------------------------------------------
    def write(self, payload: bytes, routing_key: str | None = None) -> None:
        """Write one event (queued; ``flush()`` waits for the store)."""
        try:
            self._writers[self._router.index_of(routing_key)].append(payload, routing_key)
        except SegmentSealedError as sealed:
            self._rescale(sealed)

    def write_many(self, payloads: list[bytes], routing_keys: list[str | None] | None = None) -> None:
        """Write events in order (``routing_keys``: one per event, or ``None`` for none at all)."""
        index_of = self._router.index_of
        writers = self._writers
        router = self._router
        i = 0
        n = len(payloads)
        while i < n:
            try:
                if routing_keys is None:
                    while i < n:
                        writers[index_of(None)].append(payloads[i], None)
                        i += 1
                else:
                    while i < n:
                        key = routing_keys[i]
                        writers[index_of(key)].append(payloads[i], key)
                        i += 1
            except SegmentSealedError as sealed:
                i += 1  # the event being written is among the unacknowledged ones
                self._rescale(sealed)
                if self._router is not router:
                    router, writers, index_of = self._router, self._writers, self._router.index_of

    def flush(self) -> None:
        """Return once every event written so far is acknowledged (durable)."""
        for _attempt in range(MAX_RESCALES):
            try:
                for writer in self._writers:
                    writer.flush()
                return
            except SegmentSealedError as sealed:
                self._rescale(sealed)
        raise ConnectorError(f"{self.scope}/{self.stream}: more than {MAX_RESCALES} seals in a row")

    @property
    def reconnects(self) -> int:
        """How often the current segments' connections were made again after a failure."""
        return sum(w.stats.reconnects for w in self._writers)

    @property
    def held_at_setup(self) -> int:
        """Events a reconnect found held by the store without their acknowledgement (not resent)."""
        return sum(w.stats.held_at_setup for w in self._writers)

    @property
    def position(self) -> dict[int, int]:
        """Current segment id -> the store's write offset after this writer's last acknowledged append
        (0 where it has not appended)."""
        return {
            seg.segment_id: max(w.stats.write_offset, 0)
            for seg, w in zip(self._router.segments, self._writers, strict=True)
        }

    def note_time(self, timestamp_ms: int) -> None:
        """Flush, then note that this writer's events up to here have event time ``<= timestamp_ms``."""
        self.flush()
        position = self.position
        answer = self._controller.note_timestamp(
            self.scope, self.stream, self.writer_name, timestamp_ms, position
        )
        if answer != "SUCCESS":
            raise ConnectorError(
                f"noteTimestampFromWriter {timestamp_ms} for writer {self.writer_name} on "
                f"{self.scope}/{self.stream} answered {answer}"
            )
        self._noted = True

    def close(self) -> None:
        """Flush and close the connections (and leave the watermark computation if a time was noted)."""
        try:
            self.flush()
            if self._noted:
                self._controller.remove_writer(self.scope, self.stream, self.writer_name)
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Close the connections without flushing."""
        for writer in self._writers:
            writer.close()
        self._writers = []


class _SealedWriter:
    """Placeholder for a sealed segment's writer while the writer routes again."""

    def __init__(self, segment: str) -> None:
        self.segment = segment

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass
