"""``ControllerClient``: the few controller gRPC calls the segment reader needs.

The official Python client exposes no segment-level API, so the connector asks the controller
itself: current segments, segments at the head (the truncation point), successors of a sealed
segment and the segment store endpoint of a segment. Requests go through generic gRPC calls on
Pravega's real method paths with messages from the connector's private copy of the proto.

Network faults: the read-only calls (``RETRIED_CALLS``) that end ``UNAVAILABLE`` (refused, reset) or
``DEADLINE_EXCEEDED`` (no answer within ``readTimeoutMs``) are retried within ``networkTimeoutMs``
(:mod:`connectors.pravega.network_retry`); a deadline also replaces the channel, so a half-open
connection is left behind. Commits, aborts and creations are sent once (a lost answer may hide a
done change); their callers check the state instead.

Threading: a client is used from one thread at a time; ``shared_controller`` pools one client per
(controller, security settings) per process, as DESIGN.md allows for expensive clients.
"""

from __future__ import annotations

import base64
import threading
from dataclasses import dataclass
from typing import Any

from connector_base import ConnectorError
from connectors._extras import require_extra
from connectors.pravega.network_retry import NetworkRetry

__all__ = [
    "DEFAULT_NETWORK_TIMEOUT_MS",
    "DEFAULT_READ_TIMEOUT_MS",
    "RETRIED_CALLS",
    "ControllerClient",
    "SegmentRange",
    "Successor",
    "ConnectionSettings",
    "shared_controller",
]

pb: Any = None  # the generated messages (no type stubs), imported with grpc by the first client
CLIENT_MODULES = ("grpc", "google.protobuf", "mmh3")
SERVICE = "/io.pravega.controller.stream.api.grpc.v1.ControllerService/"
DEFAULT_NETWORK_TIMEOUT_MS = 120_000
"""How long calls that read and fail on the network are retried (``networkTimeoutMs``)."""
DEFAULT_READ_TIMEOUT_MS = 30_000
"""How long one controller call or segment store reply is waited for (``readTimeoutMs``)."""
RETRIED_CALLS = frozenset(
    {
        "checkStreamExists",
        "getCurrentSegments",
        "getSegments",
        "getSegmentsImmediatelyFollowing",
        "getURI",
        "checkTransactionState",
        "getDelegationToken",
    }
)
"""Controller calls that only read: sending one again after a lost answer changes nothing."""
_CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
]
"""gRPC's own reconnect backoff grows to 120 s; a retried call must find the controller soon after."""
HEAD_TIMESTAMP = 0
"""``getSegments`` at time 0 answers the head stream cut (the truncation point)."""


@dataclass(frozen=True, slots=True)
class ConnectionSettings:
    """Where the controller is and how to talk to it. ``repr`` never shows secrets."""

    controller: str
    tls_enabled: bool = False
    trust_store: str | None = None
    auth_enabled: bool = False
    username: str | None = None
    password: str | None = None
    auth_token: str | None = None
    network_timeout_ms: int = DEFAULT_NETWORK_TIMEOUT_MS
    read_timeout_ms: int = DEFAULT_READ_TIMEOUT_MS

    def __repr__(self) -> str:
        return (
            f"ConnectionSettings(controller={self.controller!r}, tls_enabled={self.tls_enabled}, "
            f"auth_enabled={self.auth_enabled}, credentials={'<set>' if self.has_secret else '<none>'}, "
            f"network_timeout_ms={self.network_timeout_ms}, read_timeout_ms={self.read_timeout_ms})"
        )

    @property
    def has_secret(self) -> bool:
        """Whether a password or token is configured."""
        return bool(self.password or self.auth_token)

    @property
    def target(self) -> str:
        """``host:port`` of the controller."""
        uri = self.controller
        for scheme in ("tcp://", "tls://", "pravega://"):
            if uri.startswith(scheme):
                uri = uri[len(scheme) :]
        return uri.split(",")[0].rstrip("/")

    def metadata(self) -> list[tuple[str, str]]:
        """gRPC call metadata carrying the credentials (Pravega's Basic/Bearer schemes)."""
        if not self.auth_enabled:
            return []
        if self.auth_token:
            return [("authorization", f"Bearer {self.auth_token}")]
        if self.username is not None:
            raw = f"{self.username}:{self.password or ''}".encode()
            return [("authorization", "Basic " + base64.b64encode(raw).decode())]
        return []


@dataclass(frozen=True, slots=True)
class SegmentRange:
    """A segment and its key range."""

    segment_id: int
    min_key: float
    max_key: float


@dataclass(frozen=True, slots=True)
class Successor:
    """A successor segment and the ids of all its predecessors."""

    segment: SegmentRange
    predecessors: tuple[int, ...]


def segment_name(scope: str, stream: str, segment_id: int) -> str:
    """The qualified segment name: ``scope/stream/<number>.#epoch.<epoch>``."""
    return f"{scope}/{stream}/{segment_id & 0xFFFFFFFF}.#epoch.{segment_id >> 32}"


def _client_libraries() -> Any:
    """``grpc``, with the generated messages in ``pb``: the ``pravega`` extra, imported on first use."""
    global pb
    require_extra("the Pravega controller client", "pravega", CLIENT_MODULES)
    import grpc

    from connectors.pravega._proto import controller_pb2

    pb = controller_pb2
    return grpc


class ControllerClient:
    """Blocking gRPC calls to the controller (see the module docstring)."""

    def __init__(self, settings: ConnectionSettings) -> None:
        self.settings = settings
        self._grpc = _client_libraries()
        self._lock = threading.Lock()
        self._channel = self._new_channel()
        self._metadata = settings.metadata()
        self._calls: dict[str, Any] = {}
        self._network_codes = (self._grpc.StatusCode.UNAVAILABLE, self._grpc.StatusCode.DEADLINE_EXCEEDED)

    def _new_channel(self) -> Any:
        grpc, settings = self._grpc, self.settings
        if settings.tls_enabled:
            roots = None
            if settings.trust_store:
                with open(settings.trust_store, "rb") as f:
                    roots = f.read()
            credentials = grpc.ssl_channel_credentials(roots)
            return grpc.secure_channel(settings.target, credentials, options=_CHANNEL_OPTIONS)
        return grpc.insecure_channel(settings.target, options=_CHANNEL_OPTIONS)

    def _replace_channel(self, stale: Any) -> None:
        """A new channel (a call timed out: its connection may be half-open), unless one already was."""
        with self._lock:
            if self._channel is stale:
                self._channel = self._new_channel()
                self._calls.clear()
                stale.close()

    def _callable(self, method: str, response_type: Any) -> tuple[Any, Any]:
        with self._lock:
            channel = self._channel
            call = self._calls.get(method)
            if call is None:
                call = channel.unary_unary(
                    SERVICE + method,
                    request_serializer=lambda m: m.SerializeToString(),
                    response_deserializer=response_type.FromString,
                )
                self._calls[method] = call
            return channel, call

    def _call(self, method: str, request: Any, response_type: Any) -> Any:
        retry = NetworkRetry(f"controller {method}", self.settings.target, self.settings.network_timeout_ms)
        timeout_s = self.settings.read_timeout_ms / 1000.0
        while True:
            channel, call = self._callable(method, response_type)
            retry.attempt()
            try:
                return call(request, timeout=timeout_s, metadata=self._metadata or None)
            except self._grpc.RpcError as e:
                code = e.code() if hasattr(e, "code") else None
                details = e.details() if hasattr(e, "details") else str(e)
                target = self.settings.target
                error = ConnectorError(f"Pravega controller {target} failed {method}: {code} {details}")
                # CANCELLED: another thread replaced (closed) the channel this call was on
                replaced = code == self._grpc.StatusCode.CANCELLED and channel is not self._channel
                # a TLS handshake failure (untrusted certificate) also answers UNAVAILABLE: permanent
                tls = any(w in str(details).lower() for w in ("ssl", "certificate", "tls"))
                if tls or not (code in self._network_codes or replaced) or method not in RETRIED_CALLS:
                    raise error from None
                if code == self._grpc.StatusCode.DEADLINE_EXCEEDED:
                    self._replace_channel(channel)
                retry.failed(error)

    @staticmethod
    def _stream(scope: str, stream: str) -> Any:
        return pb.StreamInfo(scope=scope, stream=stream)

    def stream_exists(self, scope: str, stream: str) -> bool:
        """Whether the stream exists."""
        return bool(self._call("checkStreamExists", self._stream(scope, stream), pb.ExistsResponse).exists)

    def current_segments(self, scope: str, stream: str) -> list[SegmentRange]:
        """The segments of the current epoch."""
        reply = self._call("getCurrentSegments", self._stream(scope, stream), pb.SegmentRanges)
        return [_range(r) for r in reply.segmentRanges]

    def head(self, scope: str, stream: str) -> dict[int, int]:
        """The head stream cut: segment id -> first readable offset."""
        request = pb.GetSegmentsRequest(streamInfo=self._stream(scope, stream), timestamp=HEAD_TIMESTAMP)
        reply = self._call("getSegments", request, pb.SegmentsAtTime)
        return {int(loc.segmentId.segmentId): int(loc.offset) for loc in reply.segments}

    def successors(self, scope: str, stream: str, segment_id: int) -> list[Successor]:
        """The segments that immediately follow a sealed segment, with all their predecessors."""
        request = pb.SegmentId(streamInfo=self._stream(scope, stream), segmentId=segment_id)
        reply = self._call("getSegmentsImmediatelyFollowing", request, pb.SuccessorResponse)
        return [Successor(_range(e.segment), tuple(sorted(int(v) for v in e.value))) for e in reply.segments]

    def endpoint(self, scope: str, stream: str, segment_id: int) -> tuple[str, int]:
        """``(host, port)`` of the segment store that owns a segment."""
        request = pb.SegmentId(streamInfo=self._stream(scope, stream), segmentId=segment_id)
        reply = self._call("getURI", request, pb.NodeUri)
        return str(reply.endpoint), int(reply.port)

    # --- transactions (the sink's driver commits what executors wrote) -----------------------
    @staticmethod
    def _txn(txn_id: int) -> Any:
        def signed(value: int) -> int:
            return value - (1 << 64) if value >= 1 << 63 else value

        return pb.TxnId(highBits=signed(txn_id >> 64), lowBits=signed(txn_id & 0xFFFFFFFFFFFFFFFF))

    def txn_state(self, scope: str, stream: str, txn_id: int) -> str:
        """``OPEN``, ``COMMITTING``, ``COMMITTED``, ``ABORTING``, ``ABORTED`` or ``UNKNOWN``."""
        request = pb.TxnRequest(streamInfo=self._stream(scope, stream), txnId=self._txn(txn_id))
        reply = self._call("checkTransactionState", request, pb.TxnState)
        return str(pb.TxnState.State.Name(reply.state))

    def end_txn(self, scope: str, stream: str, txn_id: int, commit: bool) -> None:
        """Commit or abort a transaction; raise unless the controller answers SUCCESS."""
        request = pb.TxnRequest(streamInfo=self._stream(scope, stream), txnId=self._txn(txn_id))
        method = "commitTransaction" if commit else "abortTransaction"
        reply = self._call(method, request, pb.TxnStatus)
        if reply.status != pb.TxnStatus.SUCCESS:
            raise ConnectorError(
                f"{method} of transaction {txn_id:032x} on {scope}/{stream} answered "
                f"{pb.TxnStatus.Status.Name(reply.status)}"
            )

    # --- the writer: scopes, streams, transactions, writer marks ----------------------------------
    def create_scope(self, scope: str) -> bool:
        """Create a scope; ``False`` when it exists already."""
        reply = self._call("createScope", pb.ScopeInfo(scope=scope), pb.CreateScopeStatus)
        if reply.status not in (pb.CreateScopeStatus.SUCCESS, pb.CreateScopeStatus.SCOPE_EXISTS):
            raise ConnectorError(
                f"createScope {scope} answered {pb.CreateScopeStatus.Status.Name(reply.status)}"
            )
        return bool(reply.status == pb.CreateScopeStatus.SUCCESS)

    def create_stream(self, scope: str, stream: str, segments: int) -> bool:
        """Create a stream of ``segments`` fixed segments; ``False`` when it exists already."""
        policy = pb.ScalingPolicy(
            scaleType=pb.ScalingPolicy.FIXED_NUM_SEGMENTS,
            targetRate=0,
            scaleFactor=0,
            minNumSegments=segments,
        )
        config = pb.StreamConfig(streamInfo=self._stream(scope, stream), scalingPolicy=policy)
        reply = self._call("createStream", config, pb.CreateStreamStatus)
        if reply.status not in (pb.CreateStreamStatus.SUCCESS, pb.CreateStreamStatus.STREAM_EXISTS):
            raise ConnectorError(
                f"createStream {scope}/{stream} answered {pb.CreateStreamStatus.Status.Name(reply.status)}"
            )
        return bool(reply.status == pb.CreateStreamStatus.SUCCESS)

    def create_txn(self, scope: str, stream: str, lease_ms: int) -> tuple[int, list[SegmentRange], str]:
        """Open a transaction: its id, the segments it writes to and a delegation token."""
        request = pb.CreateTxnRequest(streamInfo=self._stream(scope, stream), lease=lease_ms)
        reply = self._call("createTransaction", request, pb.CreateTxnResponse)
        txn_id = ((reply.txnId.highBits & 0xFFFFFFFFFFFFFFFF) << 64) | (
            reply.txnId.lowBits & 0xFFFFFFFFFFFFFFFF
        )
        return txn_id, [_range(r) for r in reply.activeSegments], str(reply.delegationToken)

    def ping_txn(self, scope: str, stream: str, txn_id: int, lease_ms: int) -> str:
        """Extend a transaction's lease; the answer's name (``OK`` when it was extended)."""
        request = pb.PingTxnRequest(
            streamInfo=self._stream(scope, stream), txnId=self._txn(txn_id), lease=lease_ms
        )
        reply = self._call("pingTransaction", request, pb.PingTxnStatus)
        return str(pb.PingTxnStatus.Status.Name(reply.status))

    def note_timestamp(
        self, scope: str, stream: str, writer: str, timestamp_ms: int, position: dict[int, int]
    ) -> str:
        """``noteTimestampFromWriter``: the writer's time at ``position`` (segment id -> offset written)."""
        cut = pb.StreamCut(streamInfo=self._stream(scope, stream), cut=position)
        request = pb.TimestampFromWriter(writer=writer, position=cut, timestamp=timestamp_ms)
        reply = self._call("noteTimestampFromWriter", request, pb.TimestampResponse)
        return str(pb.TimestampResponse.Status.Name(reply.result))

    def remove_writer(self, scope: str, stream: str, writer: str) -> None:
        """``removeWriter``: a writer that noted times has finished (watermarks stop waiting for it)."""
        request = pb.RemoveWriterRequest(writer=writer, stream=self._stream(scope, stream))
        self._call("removeWriter", request, pb.RemoveWriterResponse)

    def close(self) -> None:
        """Close the channel."""
        with self._lock:
            self._channel.close()


def _range(r: Any) -> SegmentRange:
    return SegmentRange(int(r.segmentId.segmentId), float(r.minKey), float(r.maxKey))


_POOL: dict[ConnectionSettings, ControllerClient] = {}
_POOL_LOCK = threading.Lock()


def shared_controller(settings: ConnectionSettings) -> ControllerClient:
    """One controller client per settings per process (gRPC channels are thread-safe)."""
    with _POOL_LOCK:
        client = _POOL.get(settings)
        if client is None:
            client = _POOL[settings] = ControllerClient(settings)
        return client


def delegation_token(client: ControllerClient, scope: str, stream: str) -> str:
    """A delegation token for the segment store (empty when authentication is off)."""
    if not client.settings.auth_enabled:
        return ""
    reply = client._call("getDelegationToken", client._stream(scope, stream), pb.DelegationToken)
    return str(reply.delegationToken)
