"""``PravegaClusterClient``: the controller plus pooled segment store connections, per thread of use.

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
from connectors.pravega.positions import StreamId
from connectors.pravega.segment_store_client import (
    NoSuchSegmentError,
    SegmentInfo,
    SegmentStoreClient,
    SegmentTruncatedError,
)
from connectors.pravega.split import segment_split_id

__all__ = ["PravegaClusterClient", "segment_name"]

LOG = logging.getLogger(__name__)


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
            store = self._stores[endpoint] = SegmentStoreClient(*endpoint, tls=self._tls_context())
        return store

    def _tls_context(self) -> ssl.SSLContext | None:
        """With ``tls_enabled``, a context trusting ``trust_store`` (else the system's CAs)."""
        if not self.settings.tls_enabled:
            return None
        if self._tls is None:
            self._tls = ssl.create_default_context(cafile=self.settings.trust_store or None)
        return self._tls

    def _drop(self, scope: str, stream: str, segment_id: int) -> None:
        key = segment_split_id(scope, stream, segment_id)
        endpoint = self._endpoints.pop(key, None)
        store = self._stores.pop(endpoint, None) if endpoint else None
        if store is not None:
            store.close()

    def info(self, scope: str, stream: str, segment_id: int) -> SegmentInfo:
        """Head, tail and seal state of a segment (one reconnect on a broken connection)."""
        name = segment_name(scope, stream, segment_id)
        for attempt in (1, 2):
            store = self._store(scope, stream, segment_id)
            try:
                return store.info(name, self._token(scope, stream))
            except (NoSuchSegmentError, SegmentTruncatedError):
                raise
            except Exception:
                self._drop(scope, stream, segment_id)
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def read(
        self, scope: str, stream: str, segment_id: int, start: int, end: int
    ) -> Iterator[tuple[int, memoryview]]:
        """``(offset, bytes)`` chunks of ``[start, end)``; the connection is dropped on failure."""
        name = segment_name(scope, stream, segment_id)
        store = self._store(scope, stream, segment_id)
        try:
            yield from store.read(name, start, end, self._token(scope, stream))
        except (NoSuchSegmentError, SegmentTruncatedError):
            raise
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
