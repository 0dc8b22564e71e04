"""Local Kinesis endpoints for tests, benchmarks and the demo (see ``BROKERS.md``).

``start_moto()``, ``start_kinesalite()`` and ``start_localstack()`` each return a running
``KinesisEndpoint`` with ``create_stream(shards)``, ``put_records(stream, records)`` and
``client()`` helpers; ``stop()`` ends it (the server's whole process group). Each endpoint declares
the features it gets wrong in ``gaps`` (``Gap`` members); a test that needs one asks
``endpoint.gap_reason(Gap.X)`` and skips with that reason.

The demo calls ``start_demo_endpoint()`` / ``stop_demo_endpoint(endpoint)``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from sparkflow_testing.gaps import DeclaresGaps
from sparkflow_testing.processes import free_port, spawn_group, stop_group, wait_listening

__all__ = [
    "ENDPOINT_KINDS",
    "Gap",
    "KinesisEndpoint",
    "ThrottlingProxy",
    "available_endpoint_kinds",
    "docker_available",
    "free_port",
    "kinesalite_bin",
    "start_demo_endpoint",
    "start_endpoint",
    "start_kinesalite",
    "start_localstack",
    "start_moto",
    "stop_demo_endpoint",
]

LOG = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
REGION = "us-east-1"
TEST_ACCESS_KEY = "testing"
TEST_SECRET_KEY = "testing"  # a dummy credential for local endpoints
KINESALITE_VERSION = "3.3.3"
ENDPOINT_KINDS = ("localstack", "moto", "kinesalite")


class Gap(Enum):
    """Features a local endpoint gets wrong (measured); the value is the skip reason."""

    RESHARDING_ROUTING = (
        "after SplitShard/MergeShards new records still go to the closed parent shard, SplitShard "
        "re-sequences "
        "the parent's records and MergeShards copies them into the child"
    )
    AT_TIMESTAMP_HANGS = (
        "GetShardIterator AT_TIMESTAMP never answers when no record is at or after the timestamp "
        "(the connector times such calls out and falls back)"
    )
    RETENTION = "records never expire, so a position older than the retention period cannot be produced"
    NO_SHARD_END_ITERATOR = "GetRecords on a closed shard never returns a null NextShardIterator"
    NO_THROTTLING = "never throttles (ProvisionedThroughputExceededException is injected by a proxy instead)"


def docker_available() -> bool:
    """Whether a Docker engine answers (and the testcontainers package is importable)."""
    try:
        import testcontainers  # type: ignore[import-not-found]  # noqa: F401 - is it installed?

        import docker  # type: ignore[import-not-found]  # noqa: F401 - is it installed?
    except ImportError:
        return False
    try:
        import docker as _docker  # type: ignore[import-not-found]

        _docker.from_env(timeout=3).ping()
        return True
    except Exception:  # any failure to reach the engine means "no Docker here"
        return False


def kinesalite_bin() -> Path | None:
    """The kinesalite launcher: ``$KINESALITE_BIN`` or ``<repo>/.kinesalite/node_modules/.bin/kinesalite``."""
    env = os.environ.get("KINESALITE_BIN")
    if env and Path(env).exists():
        return Path(env)
    repo = Path(__file__).resolve().parents[3]  # the checkout: testing/sparkflow_testing/kinesis/endpoint.py
    local = repo / ".kinesalite" / "node_modules" / ".bin" / "kinesalite"
    if local.exists() and shutil.which("node"):
        return local
    return None


def available_endpoint_kinds() -> list[str]:
    """The endpoint kinds that can start on this machine, best first."""
    kinds = []
    if docker_available():
        kinds.append("localstack")
    kinds.append("moto")
    if kinesalite_bin() is not None:
        kinds.append("kinesalite")
    return kinds


@dataclass
class KinesisEndpoint(DeclaresGaps):
    """A running Kinesis-protocol endpoint and client helpers for it."""

    kind: str
    url: str
    region: str = REGION
    gaps: frozenset[Gap] = frozenset()
    stream_create_delay_s: float = 0.0
    _proc: subprocess.Popen[bytes] | None = None
    _log: Path | None = None
    _workdir: Path | None = None
    _container: Any = None
    _clients: dict[str, Any] = field(default_factory=dict)

    # --- clients ------------------------------------------------------------------------------
    def options(self, **extra: str) -> dict[str, str]:
        """Connector options that reach this endpoint."""
        return {
            "endpointUrl": self.url,
            "region": self.region,
            "awsAccessKeyId": TEST_ACCESS_KEY,
            "awsSecretAccessKey": TEST_SECRET_KEY,
            **extra,
        }

    def client(self) -> Any:
        """A boto3 Kinesis client for this endpoint (cached)."""
        if "kinesis" not in self._clients:
            import boto3
            from botocore.config import Config

            self._clients["kinesis"] = boto3.client(
                "kinesis",
                endpoint_url=self.url,
                region_name=self.region,
                aws_access_key_id=TEST_ACCESS_KEY,
                aws_secret_access_key=TEST_SECRET_KEY,
                config=Config(retries={"max_attempts": 10, "mode": "standard"}, max_pool_connections=20),
            )
        return self._clients["kinesis"]

    def create_stream(self, shards: int = 1, name: str | None = None) -> str:
        """Create a stream (a fresh unique name unless given) and wait until it is ACTIVE."""
        stream = name or f"s-{uuid.uuid4().hex[:10]}"
        self.client().create_stream(StreamName=stream, ShardCount=shards)
        self.wait_active(stream)
        return stream

    def wait_active(self, stream: str, timeout_s: float = 30.0) -> None:
        """Wait until ``stream`` is ACTIVE (after create or reshard)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            desc = self.client().describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]
            if desc["StreamStatus"] == "ACTIVE":
                return
            time.sleep(0.1)
        raise TimeoutError(f"stream {stream} did not become ACTIVE within {timeout_s}s")

    def put_records(
        self,
        stream: str,
        records: Iterable[tuple[str, bytes]],
        explicit_hash_keys: Sequence[str] | None = None,
    ) -> list[tuple[str, str]]:
        """Put ``(partition key, data)`` records in PutRecords calls of 500, retrying failed entries.

        Returns ``(shard id, sequence number)`` per record, in input order.
        """
        items = list(records)
        out: list[tuple[str, str]] = [("", "")] * len(items)
        client = self.client()
        for base in range(0, len(items), 500):
            pending = list(range(base, min(base + 500, len(items))))
            for _attempt in range(20):
                entries = []
                for i in pending:
                    entry: dict[str, Any] = {"PartitionKey": items[i][0], "Data": items[i][1]}
                    if explicit_hash_keys is not None:
                        entry["ExplicitHashKey"] = explicit_hash_keys[i]
                    entries.append(entry)
                resp = client.put_records(StreamName=stream, Records=entries)
                failed = []
                for i, r in zip(pending, resp["Records"], strict=True):
                    if "ErrorCode" in r:
                        failed.append(i)
                    else:
                        out[i] = (r["ShardId"], r["SequenceNumber"])
                pending = failed
                if not pending:
                    break
                time.sleep(0.05)
            if pending:
                raise RuntimeError(f"{len(pending)} records could not be put into {stream}")
        return out

    def open_shards(self, stream: str) -> list[dict[str, Any]]:
        """The open shards of ``stream`` (no ``EndingSequenceNumber``), by hash range."""
        shards = self.list_shards(stream)
        opened = [s for s in shards if "EndingSequenceNumber" not in s["SequenceNumberRange"]]
        return sorted(opened, key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]))

    def list_shards(self, stream: str) -> list[dict[str, Any]]:
        """Every shard of ``stream``."""
        client = self.client()
        resp = client.list_shards(StreamName=stream)
        shards = list(resp["Shards"])
        while resp.get("NextToken"):
            resp = client.list_shards(NextToken=resp["NextToken"])
            shards.extend(resp["Shards"])
        return shards

    def split_shard(self, stream: str, shard_id: str) -> None:
        """Split ``shard_id`` in the middle of its hash range and wait until the stream is ACTIVE."""
        shard = next(s for s in self.list_shards(stream) if s["ShardId"] == shard_id)
        lo, hi = int(shard["HashKeyRange"]["StartingHashKey"]), int(shard["HashKeyRange"]["EndingHashKey"])
        self.client().split_shard(
            StreamName=stream, ShardToSplit=shard_id, NewStartingHashKey=str((lo + hi) // 2)
        )
        time.sleep(self.stream_create_delay_s)
        self.wait_active(stream)

    def merge_shards(self, stream: str, shard_id: str, adjacent_shard_id: str) -> None:
        """Merge two adjacent shards and wait until the stream is ACTIVE."""
        self.client().merge_shards(
            StreamName=stream, ShardToMerge=shard_id, AdjacentShardToMerge=adjacent_shard_id
        )
        time.sleep(self.stream_create_delay_s)
        self.wait_active(stream)

    # --- lifecycle ----------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the endpoint (its whole process group, or its container)."""
        if self._proc is not None:
            stop_group(self._proc)
            self._proc = None
        if self._container is not None:
            try:
                self._container.stop()
            finally:
                self._container = None
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def __enter__(self) -> KinesisEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _spawn(
    kind: str, cmd: list[str], port: int, gaps: frozenset[Gap], delay_s: float = 0.0
) -> KinesisEndpoint:
    workdir = Path(tempfile.mkdtemp(prefix=f"kinesis-{kind}-"))
    log = workdir / "server.log"
    proc = spawn_group(cmd, log, cwd=workdir)
    url = f"http://127.0.0.1:{port}"
    endpoint = KinesisEndpoint(
        kind, url, gaps=gaps, stream_create_delay_s=delay_s, _proc=proc, _log=log, _workdir=workdir
    )
    try:
        wait_listening("127.0.0.1", port, proc, START_TIMEOUT_S, log, "endpoint")
    except BaseException:
        endpoint.stop()
        raise
    return endpoint


MOTO_GAPS = frozenset({Gap.RESHARDING_ROUTING, Gap.RETENTION, Gap.NO_SHARD_END_ITERATOR, Gap.NO_THROTTLING})
KINESALITE_GAPS = frozenset({Gap.AT_TIMESTAMP_HANGS, Gap.RETENTION, Gap.NO_THROTTLING})
LOCALSTACK_GAPS = frozenset({Gap.RETENTION, Gap.NO_THROTTLING})


def start_moto(port: int | None = None) -> KinesisEndpoint:
    """A ``moto`` server in its own process group on a free loopback port, answering one request at a
    time (``moto_serial``: moto's threaded server can lose a record when two PutRecords calls reach one
    shard at once)."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "sparkflow_testing.kinesis.moto_serial", "-H", "127.0.0.1", "-p", str(port)]
    return _spawn("moto", cmd, port, MOTO_GAPS)


def start_kinesalite(port: int | None = None) -> KinesisEndpoint:
    """A ``kinesalite`` server (npm) in memory, run by ``kinesalite_guard.js`` (a reset client does not
    end it); raises ``FileNotFoundError`` when it is not installed."""
    binary = kinesalite_bin()
    if binary is None:
        raise FileNotFoundError(
            "kinesalite is not installed: "
            f"npm install --no-save --prefix .kinesalite kinesalite@{KINESALITE_VERSION}"
        )
    port = port or free_port()
    cmd = [
        "node",
        str(Path(__file__).with_name("kinesalite_guard.js")),
        str(binary.resolve()),
        "--port",
        str(port),
        "--createStreamMs",
        "0",
        "--deleteStreamMs",
        "0",
        "--updateStreamMs",
        "0",
        "--shardLimit",
        "1000",
    ]
    return _spawn("kinesalite", cmd, port, KINESALITE_GAPS, delay_s=0.05)


def start_localstack() -> KinesisEndpoint:
    """LocalStack through Testcontainers (needs a Docker engine)."""
    from testcontainers.localstack import LocalStackContainer  # type: ignore[import-not-found]

    container = LocalStackContainer(image="localstack/localstack:3").with_services("kinesis")
    container.start()
    url = container.get_url()
    return KinesisEndpoint("localstack", url, gaps=LOCALSTACK_GAPS, _container=container)


def start_endpoint(kind: str) -> KinesisEndpoint:
    """Start an endpoint of ``kind`` (one of ``ENDPOINT_KINDS``)."""
    match kind:
        case "moto":
            return start_moto()
        case "kinesalite":
            return start_kinesalite()
        case "localstack":
            return start_localstack()
        case _:
            raise ValueError(f"unknown Kinesis endpoint kind {kind!r}; expected one of {ENDPOINT_KINDS}")


def start_demo_endpoint() -> KinesisEndpoint:
    """A local endpoint for ``make demo SYSTEM=kinesis``: LocalStack where Docker answers, else moto."""
    return start_localstack() if docker_available() else start_moto()


def stop_demo_endpoint(endpoint: KinesisEndpoint) -> None:
    """Stop what ``start_demo_endpoint`` started."""
    endpoint.stop()


class _QuietHTTPServer(ThreadingHTTPServer):
    """Clients that give up (for example after a read timeout) are not an error worth a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


class ThrottlingProxy:
    """An HTTP proxy in front of an endpoint that answers some Kinesis calls with a throttling error.

    Every ``every``-th call of an action in ``actions`` gets HTTP 400
    ``ProvisionedThroughputExceededException`` without reaching the endpoint, as the real service
    does when a shard's read limit is exceeded. Counts of injected errors are in ``injected``. With
    ``partial_put_every``, every such PutRecords call is a partial failure: the odd-numbered entries are
    not forwarded and come back with ``ErrorCode`` (counted in ``partial_failures``).

    Threading: a ``ThreadingHTTPServer`` on a background thread (test code only).
    """

    def __init__(
        self,
        target_url: str,
        actions: Iterable[str] = ("GetRecords",),
        every: int = 3,
        partial_put_every: int | None = None,
    ) -> None:
        self.target_url = target_url.rstrip("/")
        self.actions = frozenset(actions)
        self.every = every
        self.partial_put_every = partial_put_every
        self.injected = 0
        self.partial_failures = 0
        self._puts = 0
        self.forwarded = 0
        self._count = 0
        self._lock = threading.Lock()
        proxy = self

        class _Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
                action = (self.headers.get("X-Amz-Target") or "").rsplit(".", 1)[-1]
                if proxy._should_throttle(action):
                    payload = json.dumps(
                        {
                            "__type": "ProvisionedThroughputExceededException",
                            "message": "Rate exceeded for shard (injected)",
                        }
                    ).encode()
                    self.send_response(400)
                    self.send_header("Content-Type", "application/x-amz-json-1.1")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")
                }
                if action == "PutRecords" and proxy._should_fail_partially():
                    status, data, rheaders = proxy._partial_put(self.path, body, headers)
                else:
                    status, data, rheaders = proxy._forward(self.path, body, headers)
                self.send_response(status)
                for k, v in rheaders.items():
                    if k.lower() not in (
                        "content-length",
                        "connection",
                        "transfer-encoding",
                        "server",
                        "date",
                    ):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = _QuietHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="throttling-proxy", daemon=True
        )
        self._thread.start()

    def _forward(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, Any]:
        # the client signed the original body; the endpoints used here do not verify signatures
        req = urllib.request.Request(self.target_url + path, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:  # loopback endpoint
                return resp.status, resp.read(), resp.headers
        except urllib.error.HTTPError as e:
            return e.code, e.read(), e.headers

    def _should_fail_partially(self) -> bool:
        with self._lock:
            if self.partial_put_every is None:
                return False
            self._puts += 1
            return self._puts % self.partial_put_every == 0

    def _partial_put(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, Any]:
        """Forward only the even-numbered entries; report the odd ones as throttled (a partial failure)."""
        request = json.loads(body)
        entries = request["Records"]
        kept = [e for i, e in enumerate(entries) if i % 2 == 0]
        status, data, rheaders = self._forward(
            path, json.dumps({**request, "Records": kept}).encode(), headers
        )
        if status != 200:
            return status, data, rheaders
        results = iter(json.loads(data)["Records"])
        merged = []
        for i in range(len(entries)):
            if i % 2 == 0:
                merged.append(next(results))
            else:
                merged.append(
                    {
                        "ErrorCode": "ProvisionedThroughputExceededException",
                        "ErrorMessage": "Rate exceeded for shard (injected)",
                    }
                )
        failed = sum(1 for r in merged if "ErrorCode" in r)
        with self._lock:
            self.partial_failures += failed
        return 200, json.dumps({"FailedRecordCount": failed, "Records": merged}).encode(), rheaders

    def _should_throttle(self, action: str) -> bool:
        with self._lock:
            if action not in self.actions:
                self.forwarded += 1
                return False
            self._count += 1
            if self._count % self.every == 0:
                self.injected += 1
                return True
            self.forwarded += 1
            return False

    def stop(self) -> None:
        """Stop the proxy."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
