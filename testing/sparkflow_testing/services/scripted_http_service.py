"""An aiohttp lookup service with scripted latency and failures, for Async I/O tests and benchmarks.

``start_http_service(latency_ms)`` runs it as a child process (its own process group) and returns
an ``HttpService`` with ``url``, ``stats()``, ``reset()`` and ``stop()``.

``GET /lookup?id=N`` answers ``{"id": N, "value": "value-N", "attempt": k}`` after the latency.
Scripting, per request: ``latency_ms`` overrides the latency; ``fail_first=k`` answers 503 to the
first ``k`` requests for that id; ``group`` names who is asking (e.g. a Spark partition), for the
per-group peak of concurrent requests. ``GET /stats`` returns the request count, the peak of
requests in flight overall and per group, the attempts per id and the distinct
``Idempotency-Key`` headers seen. ``POST /reset`` clears them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from subprocess import Popen
from typing import Any

from sparkflow_testing.processes import free_port, spawn_group, stop_group, wait_listening

__all__ = ["HttpService", "start_http_service"]

START_TIMEOUT_S = 30.0


@dataclass
class HttpService:
    """A running scripted service: its base ``url``, its process."""

    url: str
    proc: Popen[bytes]

    def stats(self) -> dict[str, Any]:
        """The counters since the last ``reset``."""
        with urllib.request.urlopen(f"{self.url}/stats", timeout=10) as r:
            return dict(json.loads(r.read()))

    def reset(self) -> None:
        """Clear the counters."""
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/reset", method="POST"), timeout=10).close()

    def stop(self) -> None:
        """Stop the service's process group."""
        stop_group(self.proc)


def start_http_service(latency_ms: float = 10.0, log: Path | None = None) -> HttpService:
    """Start the service on a free port; ``latency_ms`` is the default latency of ``/lookup``."""
    port = free_port()
    cmd = [sys.executable, "-m", __name__, "--port", str(port), "--latency-ms", str(latency_ms)]
    proc = spawn_group(cmd, log)
    try:
        wait_listening("127.0.0.1", port, proc, START_TIMEOUT_S, log, "scripted HTTP service")
    except BaseException:
        stop_group(proc)
        raise
    return HttpService(f"http://127.0.0.1:{port}", proc)


class _Counters:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.in_flight = 0
        self.peak = 0
        self.group_in_flight: Counter[str] = Counter()
        self.group_peak: Counter[str] = Counter()
        self.attempts: Counter[str] = Counter()
        self.keys: set[str] = set()


def _app(default_latency_ms: float) -> Any:
    from aiohttp import web

    counters = _Counters()

    async def lookup(request: web.Request) -> web.Response:
        q = request.query
        ident = q.get("id", "")
        group = q.get("group", "")
        counters.requests += 1
        counters.attempts[ident] += 1
        attempt = counters.attempts[ident]
        key = request.headers.get("Idempotency-Key")
        if key:
            counters.keys.add(key)
        counters.in_flight += 1
        counters.group_in_flight[group] += 1
        counters.peak = max(counters.peak, counters.in_flight)
        counters.group_peak[group] = max(counters.group_peak[group], counters.group_in_flight[group])
        try:
            await asyncio.sleep(float(q.get("latency_ms", default_latency_ms)) / 1000.0)
        finally:
            counters.in_flight -= 1
            counters.group_in_flight[group] -= 1
        if attempt <= int(q.get("fail_first", "0")):
            return web.Response(status=503, text=f"scripted failure {attempt}")
        return web.json_response({"id": ident, "value": f"value-{ident}", "attempt": attempt})

    async def stats(_: web.Request) -> web.Response:
        return web.json_response(
            {
                "requests": counters.requests,
                "peak": counters.peak,
                "group_peak": dict(counters.group_peak),
                "attempts": dict(counters.attempts),
                "keys": sorted(counters.keys),
            }
        )

    async def reset(_: web.Request) -> web.Response:
        counters.reset()
        return web.Response(text="ok")

    app = web.Application()
    app.add_routes([web.get("/lookup", lookup), web.get("/stats", stats), web.post("/reset", reset)])
    return app


def main(argv: list[str] | None = None) -> None:
    """Serve until killed."""
    from aiohttp import web

    parser = argparse.ArgumentParser(prog=f"python -m {__name__}")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency-ms", type=float, default=10.0)
    args = parser.parse_args(argv)
    web.run_app(_app(args.latency_ms), host="127.0.0.1", port=args.port, print=None, access_log=None)


if __name__ == "__main__":
    main()
