"""Apicurio Registry 2.6.13 for tests: a real schema registry serving the Confluent-compatible API.

Confluent's own registry is not served by the package registries these machines reach; Apicurio
publishes a ready Quarkus distribution on Maven Central
(``io.apicurio:apicurio-registry-app:2.6.13.Final:tar.gz:all``). ``start_apicurio()`` unpacks it
once into the Maven cache directory (:func:`sparkflow_testing.maven.cache_root`; the download
itself stays in Maven's repository), runs it on Java 17 with in-memory storage, waits for
``/health/ready`` and returns a ``SchemaRegistryServer`` whose ``url`` is the Confluent API
(``/apis/ccompat/v7``). With ``secure=True`` a front (:mod:`.auth_proxy`) is started too: TLS with a
certificate from a test CA, client certificates required, and basic or bearer credentials;
``secure_url`` and ``security`` describe it. ``stop()`` ends both process groups.

What Apicurio's Confluent API does differently from Confluent's registry is declared in ``gaps``
(``Gap`` members); a test that needs the faithful behaviour skips with ``server.gap_reason(Gap.X)``.

Threading: none.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from sparkflow_testing.gaps import DeclaresGaps
from sparkflow_testing.jvm import TEST_JVM_FLAGS
from sparkflow_testing.kafka.apache_kafka import _certificate, _pem
from sparkflow_testing.maven import DEPENDENCY_PLUGIN, MavenError, cache_root, require_java_and_maven
from sparkflow_testing.processes import exit_report, free_port, spawn_group, stop_group, wait_listening

__all__ = ["APICURIO_ARTIFACT", "Gap", "RegistrySecurity", "SchemaRegistryServer", "start_apicurio"]

APICURIO_VERSION = "2.6.13.Final"
APICURIO_ARTIFACT = f"io.apicurio:apicurio-registry-app:{APICURIO_VERSION}:tar.gz:all"
RUNNER_JAR = f"apicurio-registry-app-{APICURIO_VERSION}-runner.jar"
CCOMPAT_PATH = "/apis/ccompat/v7"
START_TIMEOUT_S = 90.0
UNPACK_TIMEOUT_S = 1200.0
_COMPLETE = ".complete"


class Gap(Enum):
    """Where Apicurio 2.6.13's Confluent API differs from Confluent's registry; the value is the reason."""

    PROTOBUF_SERIALIZED = (
        "GET /schemas/ids/N?format=serialized returns the stored .proto text instead of a base64 "
        "FileDescriptorProto (Apicurio issues 1478, 5790, 7066): confluent-kafka's "
        "ProtobufDeserializer cannot parse it"
    )
    SCHEMA_GUIDS = "no /schemas/guids endpoint: magic byte 1 (schema GUIDs) cannot be resolved"
    NO_OWN_AUTH = (
        "authenticates only through OIDC (Keycloak): basic and bearer credentials are enforced by "
        "the fixture's front (auth_proxy), not by the registry itself"
    )


@dataclass(frozen=True)
class RegistrySecurity:
    """Secrets and certificate files of the secure front (the CA signs server and client certificates)."""

    ca_pem: Path
    client_cert: Path
    client_key: Path
    untrusted_ca_pem: Path
    user: str
    password: str
    token: str

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every secret a test must never find in an error, log or checkpoint."""
        return (self.password, self.token)


@dataclass
class SchemaRegistryServer(DeclaresGaps):
    """A running registry: ``url`` (plain HTTP, loopback) and, when secure, ``secure_url``."""

    kind: str
    url: str
    gaps: frozenset[Gap]
    workdir: Path
    secure_url: str | None = None
    security: RegistrySecurity | None = None
    _procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def client_config(self, **conf: Any) -> dict[str, Any]:
        """Settings of confluent-kafka's ``SchemaRegistryClient`` for the plain endpoint."""
        return {"url": self.url, **conf}

    def client(self, **conf: Any) -> Any:
        """A confluent-kafka ``SchemaRegistryClient`` on the plain endpoint."""
        from confluent_kafka.schema_registry import SchemaRegistryClient

        return SchemaRegistryClient(self.client_config(**conf))

    def register(self, subject: str, schema: str, schema_type: str = "AVRO") -> int:
        """Register ``schema`` under ``subject``; its id."""
        from confluent_kafka.schema_registry import Schema

        return int(self.client().register_schema(subject, Schema(schema, schema_type)))

    def set_compatibility(self, subject: str, level: str) -> None:
        """Set a subject's compatibility level (``NONE``, ``BACKWARD``, ...)."""
        self.client().set_compatibility(subject, level)

    def stop(self) -> None:
        """Stop the front and the registry (their process groups) and remove the work directory."""
        while self._procs:
            stop_group(self._procs.pop())
        shutil.rmtree(self.workdir, ignore_errors=True)


def distribution() -> Path:
    """The unpacked Apicurio distribution (cached; unpacked with Maven's dependency plugin once)."""
    require_java_and_maven()
    entry = cache_root() / f"apicurio-registry-{APICURIO_VERSION}"
    if (entry / _COMPLETE).exists():
        return entry / "dist"
    entry.mkdir(parents=True, exist_ok=True)
    with open(entry / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (entry / _COMPLETE).exists():
            return entry / "dist"
        shutil.rmtree(entry / "dist", ignore_errors=True)
        cmd = [
            "mvn", "-B", "-q", f"{DEPENDENCY_PLUGIN}:unpack",
            f"-Dartifact={APICURIO_ARTIFACT}", f"-DoutputDirectory={entry / 'dist'}",
        ]  # fmt: skip
        try:
            done = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=UNPACK_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                cwd=entry,
            )
        except subprocess.TimeoutExpired as exc:
            raise MavenError(f"unpacking {APICURIO_ARTIFACT} took over {exc.timeout}s") from exc
        if done.returncode != 0 or not (entry / "dist" / RUNNER_JAR).exists():
            raise MavenError(
                f"mvn could not unpack {APICURIO_ARTIFACT}:\n{(done.stdout + done.stderr)[-3000:]}"
            )
        (entry / _COMPLETE).write_text(APICURIO_ARTIFACT + "\n")
    return entry / "dist"


def _wait_ready(base: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(exit_report("Apicurio", proc.returncode, log.read_text(errors="replace")))
        try:
            with urllib.request.urlopen(base + "/health/ready", timeout=2) as resp:
                if json.load(resp).get("status") == "UP":
                    return
        except (OSError, urllib.error.URLError, ValueError):
            pass
        time.sleep(0.2)
    raise TimeoutError(
        f"Apicurio on {base} not ready within {START_TIMEOUT_S}s: {log.read_text(errors='replace')[-2000:]}"
    )


def _security(workdir: Path) -> RegistrySecurity:
    ca_key, ca_cert = _certificate("sparkflow-registry-ca")
    key, cert = _certificate("localhost", issuer=(ca_key, ca_cert))
    client_key, client_cert = _certificate("localhost", issuer=(ca_key, ca_cert))
    from cryptography.hazmat.primitives.serialization import NoEncryption, PrivateFormat

    def write_key(path: Path, k: Any) -> Path:
        path.write_bytes(k.private_bytes(_pem(), PrivateFormat.PKCS8, NoEncryption()))
        return path

    (workdir / "ca.pem").write_bytes(ca_cert.public_bytes(_pem()))
    (workdir / "server.pem").write_bytes(cert.public_bytes(_pem()))
    write_key(workdir / "server.key", key)
    (workdir / "client.pem").write_bytes(client_cert.public_bytes(_pem()))
    write_key(workdir / "client.key", client_key)
    (workdir / "other-ca.pem").write_bytes(_certificate("not-the-registry-ca")[1].public_bytes(_pem()))
    return RegistrySecurity(
        ca_pem=workdir / "ca.pem",
        client_cert=workdir / "client.pem",
        client_key=workdir / "client.key",
        untrusted_ca_pem=workdir / "other-ca.pem",
        user="registry-user",
        password=f"pw-{uuid.uuid4().hex}",
        token=f"tok-{uuid.uuid4().hex}",
    )


def start_apicurio(secure: bool = False, java: str = "java") -> SchemaRegistryServer:
    """Start Apicurio (and, with ``secure``, its TLS/auth front); ready when this returns."""
    dist = distribution()
    workdir = Path(tempfile.mkdtemp(prefix="apicurio-"))
    port = free_port()
    log = workdir / "apicurio.log"
    cmd = [
        java, "-Xmx192m", *TEST_JVM_FLAGS,
        "-Dquarkus.http.host=127.0.0.1", f"-Dquarkus.http.port={port}",
        "-Dquarkus.management.enabled=false", "-Dquarkus.log.level=WARN",
        "-jar", str(dist / RUNNER_JAR),
    ]  # fmt: skip
    proc = spawn_group(cmd, log, cwd=workdir)
    base = f"http://127.0.0.1:{port}"
    server = SchemaRegistryServer(
        kind="apicurio", url=base + CCOMPAT_PATH, gaps=frozenset(Gap), workdir=workdir, _procs=[proc]
    )
    try:
        _wait_ready(base, proc, log)
        if secure:
            sec = _security(workdir)
            front_port = free_port()
            front_log = workdir / "front.log"
            env_cmd = [
                sys.executable, "-m", "sparkflow_testing.registry.auth_proxy", "--port", str(front_port),
                "--upstream", base, "--cert", str(workdir / "server.pem"),
                "--key", str(workdir / "server.key"),
                "--client-ca", str(sec.ca_pem),
            ]  # fmt: skip
            secrets = {
                "REGISTRY_PROXY_BASIC": f"{sec.user}:{sec.password}",
                "REGISTRY_PROXY_BEARER": sec.token,
            }
            front = spawn_group(env_cmd, front_log, env={**os.environ, **secrets})
            server._procs.append(front)
            wait_listening("127.0.0.1", front_port, front, 30.0, front_log, "registry front")
            server.secure_url = f"https://localhost:{front_port}{CCOMPAT_PATH}"
            server.security = sec
    except BaseException:
        server.stop()
        raise
    return server
