"""The emulator's own control interface: JSON over HTTP on a separate port. Not part of Pravega.

Routes (all answers are JSON objects; errors carry ``{"error": message}`` with status 400/404):

=======  ==================================================  =========================================
GET      ``/v1/health``                                      ``{"ok": true}``
GET      ``/v1/streams/<scope>/<stream>``                    epochs, segments (id, name, key range,
                                                             start offset, length, sealed), head cut
POST     ``/v1/streams/<scope>/<stream>/scale``              body ``{"sealed": [ids],
                                                             "ranges": [[low, high], ...]}``;
                                                             answers ``{"epoch": e, "segments":
                                                             [current], "created": [new ones]}``
POST     ``/v1/streams/<scope>/<stream>/truncate``           body ``{"cut": {"<segment id>": offset}}``
GET      ``/v1/segments?name=<qualified segment name>``      one segment's offsets and seal state
=======  ==================================================  =========================================

:class:`EmulatorControl` is a small blocking client for these routes (standard library only).
The HTTP server handles one request per connection and runs on the emulator's asyncio loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from .metadata import Metadata, MetadataError, NotFoundError
from .storage import SegmentError, SegmentStorage

__all__ = ["ControlError", "ControlServer", "EmulatorControl", "equal_key_ranges"]

_LOG = logging.getLogger(__name__)
_MAX_BODY = 1 << 20


class ControlError(Exception):
    """The control interface refused a request; ``status`` is the HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class ControlServer:
    """Serves the control routes for one emulator."""

    def __init__(self, metadata: Metadata, storage: SegmentStorage) -> None:
        self.metadata = metadata
        self.storage = storage
        self._server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> int:
        """Listen and return the bound port."""
        self._server = await asyncio.start_server(self._serve, host, port)
        return int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1").strip()
            headers = {}
            while True:
                line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1").strip()
                if not line:
                    break
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = min(int(headers.get("content-length", "0")), _MAX_BODY)
            body = await reader.readexactly(length) if length else b""
            method, target, _version = request_line.split(" ", 2)
            status, payload = self._dispatch(method, target, body)
        except Exception as exc:  # malformed request
            status, payload = 400, {"error": f"bad request: {exc}"}
        data = json.dumps(payload).encode()
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}.get(status, "Error")
        writer.write(
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
            + data
        )
        with contextlib.suppress(Exception):
            await writer.drain()
            writer.close()

    def _dispatch(self, method: str, target: str, body: bytes) -> tuple[int, dict[str, Any]]:
        url = urllib.parse.urlsplit(target)
        parts = [urllib.parse.unquote(p) for p in url.path.strip("/").split("/")]
        args = json.loads(body) if body else {}
        _LOG.info("control %s %s %s", method, url.path, args or "")
        try:
            match method, parts:
                case "GET", ["v1", "health"]:
                    return 200, {"ok": True}
                case "GET", ["v1", "streams", scope, stream]:
                    return 200, self._describe(scope, stream)
                case "POST", ["v1", "streams", scope, stream, "scale"]:
                    ranges = [(float(low), float(high)) for low, high in args["ranges"]]
                    epoch = self.metadata.scale(scope, stream, [int(s) for s in args["sealed"]], ranges)
                    described = self._describe(scope, stream)
                    current = [s for s in described["segments"] if s["id"] in described["epochs"][epoch]]
                    created = [s for s in current if s["epoch"] == epoch]
                    return 200, {"epoch": epoch, "segments": current, "created": created}
                case "POST", ["v1", "streams", scope, stream, "truncate"]:
                    self.metadata.truncate(scope, stream, {int(k): int(v) for k, v in args["cut"].items()})
                    return 200, self._describe(scope, stream)
                case "GET", ["v1", "segments"]:
                    name = urllib.parse.parse_qs(url.query).get("name", [""])[0]
                    segment = self.storage.get(name)
                    return 200, {
                        "name": name,
                        "start_offset": segment.start_offset,
                        "length": segment.length,
                        "sealed": segment.sealed,
                    }
        except (NotFoundError, SegmentError) as exc:
            return 404, {"error": str(exc)}
        except (MetadataError, KeyError, ValueError, TypeError) as exc:
            return 400, {"error": f"{type(exc).__name__}: {exc}"}
        _LOG.warning("unknown control route %s %s", method, url.path)
        return 404, {"error": f"no route {method} {url.path}"}

    def _describe(self, scope: str, name: str) -> dict[str, Any]:
        stream = self.metadata.stream(scope, name)
        segments = []
        for seg_id, record in sorted(stream.segments.items()):
            qualified = stream.qualified(seg_id)
            data = self.storage.segments.get(qualified)
            segments.append(
                {
                    "id": seg_id,
                    "name": qualified,
                    "epoch": seg_id >> 32,
                    "number": seg_id & 0xFFFFFFFF,
                    "min_key": record.min_key,
                    "max_key": record.max_key,
                    "predecessors": record.predecessors,
                    "start_offset": data.start_offset if data else None,
                    "length": data.length if data else None,
                    "sealed": data.sealed if data else True,
                }
            )
        return {
            "scope": scope,
            "stream": name,
            "sealed": stream.sealed,
            "current_epoch": stream.current_epoch,
            "epochs": stream.epochs,
            "segments": segments,
            "head": {str(k): v for k, v in stream.head.items()},
        }


def equal_key_ranges(low: float, high: float, parts: int) -> list[tuple[float, float]]:
    """``[low, high)`` cut into ``parts`` equal key ranges, the last one ending exactly at ``high``."""
    step = (high - low) / parts
    return [(low + i * step, high if i == parts - 1 else low + (i + 1) * step) for i in range(parts)]


class EmulatorControl:
    """Blocking client for :class:`ControlServer` (``base_url`` like ``http://127.0.0.1:PORT``)."""

    def __init__(self, base_url: str, timeout: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.base_url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return dict(json.loads(response.read()))
        except urllib.error.HTTPError as exc:
            message = json.loads(exc.read() or b"{}").get("error", exc.reason)
            raise ControlError(exc.code, message) from None

    def health(self) -> bool:
        """True when the emulator answers."""
        return bool(self._call("GET", "/v1/health").get("ok"))

    def describe_stream(self, scope: str, stream: str) -> dict[str, Any]:
        """Epochs, segments (with lengths and key ranges) and head of a stream."""
        return self._call("GET", f"/v1/streams/{_q(scope)}/{_q(stream)}")

    def segment_lengths(self, scope: str, stream: str) -> dict[int, int]:
        """Segment id -> write offset, for every segment the stream ever had."""
        return {s["id"]: s["length"] for s in self.describe_stream(scope, stream)["segments"]}

    def active_segments(self, scope: str, stream: str) -> list[dict[str, Any]]:
        """The segments of the current epoch."""
        described = self.describe_stream(scope, stream)
        current = set(described["epochs"][-1])
        return [s for s in described["segments"] if s["id"] in current]

    def scale(
        self, scope: str, stream: str, sealed: list[int], ranges: list[tuple[float, float]]
    ) -> dict[str, Any]:
        """Seal ``sealed`` and create successors covering ``ranges``; returns the new epoch."""
        return self._call(
            "POST",
            f"/v1/streams/{_q(scope)}/{_q(stream)}/scale",
            {"sealed": sealed, "ranges": [list(r) for r in ranges]},
        )

    def split(self, scope: str, stream: str, segment_id: int, parts: int = 2) -> dict[str, Any]:
        """Scale one active segment into ``parts`` equal key ranges."""
        segment = next(s for s in self.active_segments(scope, stream) if s["id"] == segment_id)
        ranges = equal_key_ranges(segment["min_key"], segment["max_key"], parts)
        return self.scale(scope, stream, [segment_id], ranges)

    def truncate(self, scope: str, stream: str, cut: dict[int, int]) -> dict[str, Any]:
        """Truncate the stream at ``cut`` (segment id -> offset)."""
        return self._call(
            "POST",
            f"/v1/streams/{_q(scope)}/{_q(stream)}/truncate",
            {"cut": {str(k): v for k, v in cut.items()}},
        )

    def segment(self, name: str) -> dict[str, Any]:
        """Offsets and seal state of one segment by qualified name."""
        return self._call("GET", "/v1/segments?name=" + urllib.parse.quote(name, safe=""))


def _q(name: str) -> str:
    return urllib.parse.quote(name, safe="")
