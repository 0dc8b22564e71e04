"""``PravegaClusterClient``: the controller plus pooled segment store connections, per thread of use.

Network faults: ``info`` and ``read`` reconnect and try again within ``networkTimeoutMs``
(:mod:`connectors.pravega.network_retry`) when the connection is refused, reset, closed or silent
for ``readTimeoutMs`` (the socket timeout); a read resumes at the first byte it has not yet yielded.

Threading: one instance per thread (enumerator discovery, the planner, each fetcher).
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Iterator

from connectors.pravega.controller_client import (
    ConnectionSettings,
    ControllerClient,
    SegmentRange,
    Successor,
    delegation_token,
    shared_controller,
)
from connectors.pravega.network_retry import NetworkRetry
from connectors.pravega.positions import StreamId
from connectors.pravega.segment_store_client import (
    SegmentInfo,
    SegmentStoreClient,
    SegmentStoreConnectionError,
    WrongHostError,
    tls_context,
)
from connectors.pravega.split import segment_split_id

__all__ = ["PravegaClusterClient", "segment_name"]

LOG = logging.getLogger(__name__)

NETWORK_ERRORS = (OSError, SegmentStoreConnectionError, WrongHostError)
"""Errors after which a new connection may succeed (refused, reset, closed, socket timeout, and a
store that no longer owns the segment: the controller is asked for its store again)."""


def segment_name(scope: str, stream: str, segment_id: int) -> str:
    """The qualified segment name ``scope/stream/<number>.#epoch.<epoch>``."""
    return f"{scope}/{stream}/{segment_id & 0xFFFFFFFF}.#epoch.{segment_id >> 32}"


class PravegaClusterClient:
    """Controller queries and segment reads for one thread (see the module docstring)."""

    def __init__(self, settings: ConnectionSettings) -> None:
        self.settings = settings
        self.controller: ControllerClient = shared_controller(settings)
        self._stores: dict[tuple[str, int], SegmentStoreClient] = {}
        self._endpoints: dict[str, tuple[str, int]] = {}
        self._tokens: dict[StreamId, str] = {}
        self._tls: ssl.SSLContext | None = None

    # --- controller -----------------------------------------------------------------------------
    def current_segments(self, scope: str, stream: str) -> list[SegmentRange]:
        """The current epoch's segments."""
        return self.controller.current_segments(scope, stream)

    def head(self, scope: str, stream: str) -> dict[int, int]:
        """The head stream cut."""
        return self.controller.head(scope, stream)

    def successors(self, scope: str, stream: str, segment_id: int) -> list[Successor]:
        """The successors of a sealed segment."""
        return self.controller.successors(scope, stream, segment_id)

    def stream_exists(self, scope: str, stream: str) -> bool:
        """Whether the stream exists."""
        return self.controller.stream_exists(scope, stream)

    def _token(self, scope: str, stream: str) -> str:
        token = self._tokens.get((scope, stream))
        if token is None:
            token = self._tokens[(scope, stream)] = delegation_token(self.controller, scope, stream)
        return token

    # --- segment store --------------------------------------------------------------------------
    def _store(self, scope: str, stream: str, segment_id: int) -> SegmentStoreClient:
        key = segment_split_id(scope, stream, segment_id)
        endpoint = self._endpoints.get(key)
        if endpoint is None:
            endpoint = self._endpoints[key] = self.controller.endpoint(scope, stream, segment_id)
        store = self._stores.get(endpoint)
        if store is None:
            timeout_s = self.settings.read_timeout_ms / 1000.0
            store = SegmentStoreClient(*endpoint, timeout_s=timeout_s, tls=self._tls_context())
            self._stores[endpoint] = store
        return store

    def _tls_context(self) -> ssl.SSLContext | None:
        """With ``tls_enabled``, a context trusting ``trust_store`` (else the system's CAs)."""
        if self._tls is None:
            self._tls = tls_context(self.settings.tls_enabled, self.settings.trust_store)
        return self._tls

    def _drop(self, scope: str, stream: str, segment_id: int) -> None:
        key = segment_split_id(scope, stream, segment_id)
        endpoint = self._endpoints.pop(key, None)
        store = self._stores.pop(endpoint, None) if endpoint else None
        if store is not None:
            store.close()

    def _retry(self, what: str) -> NetworkRetry:
        return NetworkRetry(what, "its segment store", self.settings.network_timeout_ms)

    def info(self, scope: str, stream: str, segment_id: int, name: str | None = None) -> SegmentInfo:
        """Head, tail and seal state of a segment (reconnecting within ``networkTimeoutMs``).

        ``name``: another segment on the same store as ``segment_id``, such as one of its
        transaction segments (default: the segment itself).
        """
        name = name or segment_name(scope, stream, segment_id)
        retry = self._retry(f"segment store GetStreamSegmentInfo of {name}")
        while True:
            retry.attempt()
            store: SegmentStoreClient | None = None
            try:
                store = self._store(scope, stream, segment_id)
                return store.info(name, self._token(scope, stream))
            except NETWORK_ERRORS as e:
                self._drop(scope, stream, segment_id)
                retry.failed(e, store.endpoint if store is not None else None)

    def read(
        self, scope: str, stream: str, segment_id: int, start: int, end: int
    ) -> Iterator[tuple[int, memoryview]]:
        """``(offset, bytes)`` chunks of ``[start, end)``, each byte once.

        A connection that fails is dropped and the read resumes on a new one at the first byte not
        yet yielded, within ``networkTimeoutMs``; any other failure drops it and is raised.
        """
        name = segment_name(scope, stream, segment_id)
        retry = self._retry(f"segment store ReadSegment of {name}")
        pos = start
        while pos < end:
            retry.attempt()
            store: SegmentStoreClient | None = None
            try:
                store = self._store(scope, stream, segment_id)
                for offset, data in store.read(name, pos, end, self._token(scope, stream)):
                    yield offset, data
                    pos = offset + len(data)
                    retry.succeeded()
                return
            except NETWORK_ERRORS as e:
                self._drop(scope, stream, segment_id)
                retry.failed(e, store.endpoint if store is not None else None)
            except BaseException:
                self._drop(scope, stream, segment_id)
                raise

    def read_bytes(self, scope: str, stream: str, segment_id: int, start: int, end: int) -> bytes:
        """``[start, end)`` as one buffer."""
        return b"".join(bytes(chunk) for _off, chunk in self.read(scope, stream, segment_id, start, end))

    def close(self) -> None:
        """Close the segment store connections (the controller channel is shared and stays)."""
        for store in self._stores.values():
            try:
                store.close()
            except OSError:
                pass
        self._stores.clear()
        self._endpoints.clear()
