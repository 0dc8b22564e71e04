"""``AsyncFunction``s used by the Async I/O tests, demo and benchmark: an HTTP and a Redis lookup.

They live in an importable module (not in a test file) so that Spark's Python workers can unpickle
them by reference.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import threading
import urllib.parse
from collections.abc import Sequence
from typing import Any

from typing_extensions import override

from connector_base.async_io import AsyncFunction, current_idempotency_key, worker_event_loop

__all__ = ["BlockingHttpLookup", "HttpLookup", "LoopProbe", "RedisLookup", "StreamHttpLookup"]


def _partition_id() -> int:
    from pyspark import TaskContext

    context = TaskContext.get()
    return -1 if context is None else context.partitionId()


class HttpLookup(AsyncFunction[dict[str, Any], dict[str, Any]]):
    """``GET {url}/lookup?id=<row[id_column]>`` on the scripted service; emits ``id, value, attempt``.

    ``params`` are added to every request (scripting: ``latency_ms``, ``fail_first``); a column
    ``latency_ms`` in the row overrides the latency for that row. The Spark partition id is sent as
    ``group``; the idempotency key, where there is one, as the ``Idempotency-Key`` header. A non-200
    answer raises (and is retried when the retry strategy says so). ``fallback`` is the ``value``
    emitted for an element that timed out (without it, a timeout fails the task).
    """

    def __init__(
        self,
        url: str,
        id_column: str = "id",
        params: dict[str, str] | None = None,
        fallback: str | None = None,
    ) -> None:
        self.url = url
        self.id_column = id_column
        self.params = dict(params or {})
        self.fallback = fallback
        self._session: Any = None
        self._group = -1
        self._query = ""

    @override
    async def open(self) -> None:
        import aiohttp

        self._group = _partition_id()
        extra = "".join(f"&{name}={v}" for name, v in self.params.items())
        self._query = f"{self.url}/lookup?group={self._group}{extra}"
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))

    @override
    async def async_invoke(self, value: dict[str, Any]) -> Sequence[dict[str, Any]]:
        query = f"{self._query}&id={value[self.id_column]}"
        if value.get("latency_ms") is not None:
            query += f"&latency_ms={value['latency_ms']}"
        key = current_idempotency_key()
        headers = {"Idempotency-Key": key} if key else None
        async with self._session.get(query, headers=headers) as response:
            response.raise_for_status()
            body = json.loads(await response.read())
        return [{"id": value[self.id_column], "value": body["value"], "attempt": body["attempt"]}]

    @override
    def timeout(self, value: dict[str, Any]) -> Sequence[dict[str, Any]]:
        if self.fallback is None:
            return super().timeout(value)
        return [{"id": value[self.id_column], "value": self.fallback, "attempt": None}]

    @override
    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


class RedisLookup(AsyncFunction[dict[str, Any], dict[str, Any]]):
    """Enriches a row from the Redis hash ``<prefix><row[key_column]>``.

    Emits the row's ``keep`` columns plus the hash's ``fields`` (null where the hash lacks them).
    """

    def __init__(
        self, url: str, key_column: str, prefix: str, keep: Sequence[str], fields: Sequence[str]
    ) -> None:
        self.url = url
        self.key_column = key_column
        self.prefix = prefix
        self.keep = tuple(keep)
        self.fields = tuple(fields)
        self._client: Any = None

    @override
    async def open(self) -> None:
        import redis.asyncio

        self._client = redis.asyncio.Redis.from_url(self.url, decode_responses=True)

    @override
    async def async_invoke(self, value: dict[str, Any]) -> Sequence[dict[str, Any]]:
        found = await self._client.hmget(f"{self.prefix}{value[self.key_column]}", list(self.fields))
        row = {c: value[c] for c in self.keep}
        row.update(zip(self.fields, found, strict=True))
        return [row]

    @override
    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()


class LoopProbe(AsyncFunction[dict[str, Any], dict[str, Any]]):
    """Emits ``id, pid, loop`` (the id of the running event loop): shows which loop served a row."""

    @override
    async def async_invoke(self, value: dict[str, Any]) -> Sequence[dict[str, Any]]:
        await asyncio.sleep(0)
        loop = asyncio.get_running_loop()
        assert loop is worker_event_loop()
        return [{"id": value["id"], "pid": os.getpid(), "loop": id(loop)}]


_connections = threading.local()


class BlockingHttpLookup:
    """The same lookup, blocking (one keep-alive ``http.client`` connection per thread): UDF baselines."""

    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        self.host = parsed.hostname or "127.0.0.1"
        self.port = parsed.port or 80

    def __call__(self, ident: int) -> str:
        """The ``value`` the service answers for ``ident``."""
        connection = getattr(_connections, "connection", None)
        if connection is None:
            connection = _connections.connection = http.client.HTTPConnection(
                self.host, self.port, timeout=30
            )
        connection.request("GET", f"/lookup?id={ident}")
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"lookup of {ident}: HTTP {response.status}")
        return str(json.loads(body)["value"])


class StreamHttpLookup(AsyncFunction[dict[str, Any], dict[str, Any]]):
    """The ``HttpLookup`` call on bare asyncio streams (HTTP/1.1 keep-alive, a pool of connections).

    Far less CPU per call than aiohttp's client: the benchmark uses it to show the operator's own
    cost where the client's would hide it. Emits ``id, value, attempt``.
    """

    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        self.host = parsed.hostname or "127.0.0.1"
        self.port = parsed.port or 80
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._open: list[asyncio.StreamWriter] = []

    @override
    async def async_invoke(self, value: dict[str, Any]) -> Sequence[dict[str, Any]]:
        if self._idle:
            reader, writer = self._idle.pop()
        else:
            reader, writer = await asyncio.open_connection(self.host, self.port)
            self._open.append(writer)
        writer.write(f"GET /lookup?id={value['id']} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = int(head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
        body = json.loads(await reader.readexactly(length))
        self._idle.append((reader, writer))
        if status != 200:
            raise RuntimeError(f"lookup of {value['id']}: HTTP {status}")
        return [{"id": value["id"], "value": body["value"], "attempt": body["attempt"]}]

    @override
    async def close(self) -> None:
        for writer in self._open:
            writer.close()
        self._open.clear()
        self._idle.clear()
