"""``PravegaAdmin``: scale, truncate and inspect streams through the controller's own gRPC API.

Tests drive scaling and truncation through this class, not through the emulator's private control
interface, so the same test runs on the emulator and on a real Pravega. It extends the connector's
:class:`~connectors.pravega.controller_client.ControllerClient` with the administrative calls the
connector itself never makes (``createScope``, ``deleteScope``, ``scale`` + ``checkScale``,
``truncateStream``, ``listScopes``), and asks the segment store for segment lengths.

The method names and answers match :class:`~sparkflow_testing.pravega.emulator.control.EmulatorControl`
where both have a method (``active_segments`` gives dicts with ``id``, ``min_key``, ``max_key``).

Threading: one instance per thread.
"""

from __future__ import annotations

import time
from typing import Any

from connectors.pravega import controller_client
from connectors.pravega.cluster_client import PravegaClusterClient
from connectors.pravega.controller_client import ConnectionSettings, ControllerClient
from sparkflow_testing.pravega.emulator.control import equal_key_ranges
from sparkflow_testing.pravega.security import StandaloneSecurity

__all__ = ["PravegaAdmin", "admin_for"]

SCALE_TIMEOUT_S = 60.0


class PravegaAdmin(ControllerClient):
    """Administrative controller calls for tests (see the module docstring)."""

    def create_scope(self, scope: str) -> bool:
        """Create a scope; False when it exists already."""
        pb = controller_client.pb
        reply = self._call("createScope", pb.ScopeInfo(scope=scope), pb.CreateScopeStatus)
        if reply.status not in (pb.CreateScopeStatus.SUCCESS, pb.CreateScopeStatus.SCOPE_EXISTS):
            raise RuntimeError(f"createScope {scope}: {pb.CreateScopeStatus.Status.Name(reply.status)}")
        return bool(reply.status == pb.CreateScopeStatus.SUCCESS)

    def delete_scope(self, scope: str) -> None:
        """Delete an empty scope."""
        pb = controller_client.pb
        self._call("deleteScope", pb.ScopeInfo(scope=scope), pb.DeleteScopeStatus)

    def delete_stream(self, scope: str, stream: str) -> None:
        """Seal and delete a stream (the standalone's in-memory storage then frees its bytes)."""
        pb = controller_client.pb
        self._call("sealStream", self._stream(scope, stream), pb.UpdateStreamStatus)
        self._call("deleteStream", self._stream(scope, stream), pb.DeleteStreamStatus)

    def list_scopes(self) -> list[str]:
        """Every scope, in the server's order, following continuation tokens."""
        pb = controller_client.pb
        names: list[str] = []
        token = ""
        while True:
            reply = self._call(
                "listScopes",
                pb.ScopesRequest(continuationToken=pb.ContinuationToken(token=token)),
                pb.ScopesResponse,
            )
            if not reply.scopes:
                return names
            names.extend(reply.scopes)
            if reply.continuationToken.token == token:
                return names
            token = reply.continuationToken.token

    def active_segments(self, scope: str, stream: str) -> list[dict[str, Any]]:
        """The current epoch's segments as ``{"id", "epoch", "min_key", "max_key"}``, in key order."""
        ranges = sorted(self.current_segments(scope, stream), key=lambda r: r.min_key)
        return [
            {"id": r.segment_id, "epoch": r.segment_id >> 32, "min_key": r.min_key, "max_key": r.max_key}
            for r in ranges
        ]

    def scale(
        self, scope: str, stream: str, sealed: list[int], ranges: list[tuple[float, float]]
    ) -> dict[str, Any]:
        """Seal ``sealed``, create successors for ``ranges``, wait for the scale to complete."""
        pb = controller_client.pb
        request = pb.ScaleRequest(
            streamInfo=self._stream(scope, stream),
            sealedSegments=sealed,
            newKeyRanges=[pb.ScaleRequest.KeyRangeEntry(start=low, end=high) for low, high in ranges],
            scaleTimestamp=int(time.time() * 1000),
        )
        reply = self._call("scale", request, pb.ScaleResponse)
        if reply.status != pb.ScaleResponse.STARTED:
            raise RuntimeError(
                f"scale of {scope}/{stream} {sealed} -> {ranges}: "
                f"{pb.ScaleResponse.ScaleStreamStatus.Name(reply.status)}"
            )
        check = pb.ScaleStatusRequest(streamInfo=self._stream(scope, stream), epoch=reply.epoch)
        deadline = time.monotonic() + SCALE_TIMEOUT_S
        while True:
            status = self._call("checkScale", check, pb.ScaleStatusResponse).status
            if status == pb.ScaleStatusResponse.SUCCESS:
                break
            if status != pb.ScaleStatusResponse.IN_PROGRESS or time.monotonic() > deadline:
                raise RuntimeError(
                    f"scale of {scope}/{stream} from epoch {reply.epoch}: "
                    f"{pb.ScaleStatusResponse.ScaleStatus.Name(status)}"
                )
            time.sleep(0.1)
        created = [
            {"id": int(r.segmentId.segmentId), "min_key": r.minKey, "max_key": r.maxKey}
            for r in reply.segments
        ]
        return {
            "epoch": int(reply.epoch),
            "segments": self.active_segments(scope, stream),
            "created": created,
        }

    def split(self, scope: str, stream: str, segment_id: int, parts: int = 2) -> dict[str, Any]:
        """Scale one active segment into ``parts`` equal key ranges."""
        segment = next(s for s in self.active_segments(scope, stream) if s["id"] == segment_id)
        ranges = equal_key_ranges(segment["min_key"], segment["max_key"], parts)
        return self.scale(scope, stream, [segment_id], ranges)

    def truncate(self, scope: str, stream: str, cut: dict[int, int]) -> None:
        """Truncate the stream at ``cut`` (segment id -> offset)."""
        pb = controller_client.pb
        request = pb.StreamCut(streamInfo=self._stream(scope, stream), cut=cut)
        reply = self._call("truncateStream", request, pb.UpdateStreamStatus)
        if reply.status != pb.UpdateStreamStatus.SUCCESS:
            raise RuntimeError(
                f"truncate {scope}/{stream} at {cut}: {pb.UpdateStreamStatus.Status.Name(reply.status)}"
            )

    def segment_lengths(self, scope: str, stream: str, segment_ids: list[int]) -> dict[int, int]:
        """Segment id -> write offset (the tail), asked of the segment store."""
        client = PravegaClusterClient(self.settings)
        return {seg: client.info(scope, stream, seg).tail for seg in segment_ids}


def admin_for(
    controller_uri: str,
    security: StandaloneSecurity | None = None,
    trust_store: str | None = None,
    username: str | None = None,
    password: str | None = None,
) -> PravegaAdmin:
    """An admin client for a cluster; for a secured standalone its own credentials are used."""
    tls = controller_uri.startswith("tls://")
    auth = False
    if security is not None:
        if security.tls and security.ca_cert is not None:
            trust_store = trust_store or str(security.ca_cert)
        if security.auth:
            auth = True
            username = username or security.username
            password = password or security.password
    settings = ConnectionSettings(
        controller_uri, tls_enabled=tls, trust_store=trust_store, auth_enabled=auth or username is not None,
        username=username, password=password,
    )  # fmt: skip
    return PravegaAdmin(settings)
