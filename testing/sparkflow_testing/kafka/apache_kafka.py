"""Real Apache Kafka for tests: one combined KRaft broker+controller as a child JVM (BROKERS.md).

``start_apache_kafka()`` resolves the pinned Kafka jars through :mod:`sparkflow_testing.maven`,
formats a storage directory in a temp dir (``kafka.tools.StorageTool format``), starts
``kafka.Kafka`` in its own process group on free loopback ports and returns a
:class:`~sparkflow_testing.kafka.broker.KafkaBroker` once a metadata request answers. The log
directory survives ``kill()``/``restart()`` (same ports, same data); ``stop()`` removes it.

``start_apache_kafka(security=KafkaSecurity.generate(workdir))`` adds a SASL_PLAINTEXT listener
(PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; the SCRAM users are written at format time) and an SSL
listener whose certificate is signed by a CA the fixture makes (``cryptography``; the JDK's
``keytool`` writes the JKS and PKCS12 trust stores);
:class:`KafkaSecurity` holds the users, passwords and the client-side trust stores (PEM, JKS, PKCS12).

``start_apache_kafka(proxy_port=P)`` adds a PLAINTEXT listener named ``PROXIED`` on a free port that
the broker *advertises* as ``127.0.0.1:P``: a client that bootstraps from ``P`` (a
:class:`~sparkflow_testing.network.fault_proxy.FaultProxy` forwarding to ``listeners["PROXIED"]``) is sent
back to ``P`` by every metadata answer, so all its traffic crosses the proxy. ``bootstrap`` stays
the direct listener (test producers, admin).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sparkflow_testing.jvm import TEST_JVM_FLAGS
from sparkflow_testing.kafka.broker import KafkaBroker
from sparkflow_testing.maven import java_command, resolve_classpath
from sparkflow_testing.processes import exit_report, free_port, spawn_group, wait_listening

__all__ = ["KAFKA_ARTIFACTS", "KafkaSecurity", "start_apache_kafka"]

KAFKA_VERSION = "4.1.1"
KAFKA_ARTIFACTS = (
    f"org.apache.kafka:kafka_2.13:{KAFKA_VERSION}",
    "org.slf4j:slf4j-api:2.0.17",
    "org.slf4j:slf4j-simple:2.0.17",
)
"""Pinned: the broker and an SLF4J backend (without one Kafka logs nothing, even on a failed start).

The API is declared too: Kafka's own dependency is slf4j-api 1.7.36, which Maven would otherwise
keep, and a 1.7 API finds no 2.x backend (it printed ``Failed to load class
"org.slf4j.impl.StaticLoggerBinder"`` and logged nothing, so a broker that exited on restart gave no
reason)."""

START_TIMEOUT_S = 90.0
RESTART_RETRY_S = 5.0
HEAP = "384m"
JVM_FLAGS = (
    # a test broker: start-up and a small footprint matter more than peak throughput
    *TEST_JVM_FLAGS,
    "-Xss512k",
    "-Djava.awt.headless=true",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
)

KEYTOOL_TIMEOUT_S = 60.0
CERT_VALID_DAYS = 3


@dataclass(frozen=True)
class KafkaSecurity:
    """Users, passwords and TLS material for a secured broker (made fresh for each test session)."""

    workdir: Path
    plain_user: str
    plain_password: str
    scram_user: str
    scram_password: str
    store_password: str
    ca_pem: Path
    truststore_jks: Path
    truststore_p12: Path
    keystore_p12: Path
    untrusted_ca_pem: Path

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every secret value a test must never find in messages, logs or checkpoints."""
        return (self.plain_password, self.scram_password, self.store_password)

    @classmethod
    def generate(cls, workdir: Path) -> KafkaSecurity:
        """Random passwords, a CA, a broker certificate for ``localhost``/``127.0.0.1`` and trust stores."""
        workdir.mkdir(parents=True, exist_ok=True)
        store_pw = f"store-{uuid.uuid4().hex}"
        ca_pem, broker_store = workdir / "ca.pem", workdir / "broker.p12"
        ca_key, ca_cert = _certificate("sparkflow-test-ca")
        ca_pem.write_bytes(ca_cert.public_bytes(_pem()))
        key, cert = _certificate("localhost", issuer=(ca_key, ca_cert))
        broker_store.write_bytes(_pkcs12(key, cert, ca_cert, store_pw))
        # Java marks trusted certificates in its own way: keytool writes the trust stores
        trust_jks, trust_p12 = workdir / "truststore.jks", workdir / "truststore.p12"
        _import(trust_jks, ca_pem, store_pw, "JKS")
        _import(trust_p12, ca_pem, store_pw, "PKCS12")
        other_pem = workdir / "other-ca.pem"
        other_pem.write_bytes(_certificate("not-the-broker-ca")[1].public_bytes(_pem()))
        return cls(
            workdir=workdir,
            plain_user="alice",
            plain_password=f"plain-{uuid.uuid4().hex}",
            scram_user="bob",
            scram_password=f"scram-{uuid.uuid4().hex}",
            store_password=store_pw,
            ca_pem=ca_pem,
            truststore_jks=trust_jks,
            truststore_p12=trust_p12,
            keystore_p12=broker_store,
            untrusted_ca_pem=other_pem,
        )


def _pem() -> Any:
    from cryptography.hazmat.primitives.serialization import Encoding

    return Encoding.PEM


def _certificate(name: str, issuer: tuple[Any, Any] | None = None) -> tuple[Any, Any]:
    """A key and a certificate for ``name``: a CA if no ``issuer``, else a server certificate it signs."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer[1].subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=CERT_VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    if issuer is not None:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return key, builder.sign(issuer[0] if issuer else key, hashes.SHA256())


def _pkcs12(key: Any, cert: Any, ca: Any, password: str) -> bytes:
    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

    encryption = BestAvailableEncryption(password.encode())
    return pkcs12.serialize_key_and_certificates(b"broker", key, cert, [ca], encryption)


def _import(path: Path, pem: Path, password: str, kind: str) -> None:
    _keytool(
        "-importcert", "-noprompt", "-alias", "ca", "-file", str(pem),
        "-keystore", str(path), "-storetype", kind, "-storepass", password,
    )  # fmt: skip


def _keytool(*args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        ["keytool", *args], input=stdin, capture_output=True, text=True, timeout=KEYTOOL_TIMEOUT_S
    )
    if done.returncode != 0:
        raise RuntimeError(f"keytool {args[0]} failed: {done.stdout}{done.stderr}")
    return done.stdout


def _properties(
    workdir: Path, ports: dict[str, int], security: KafkaSecurity | None, proxy_port: int | None = None
) -> dict[str, str]:
    listeners = {"PLAINTEXT": ports["PLAINTEXT"], "CONTROLLER": ports["CONTROLLER"]}
    protocols = {"PLAINTEXT": "PLAINTEXT", "CONTROLLER": "PLAINTEXT"}
    if security is not None:
        listeners |= {"SASL_PLAINTEXT": ports["SASL_PLAINTEXT"], "SSL": ports["SSL"]}
        protocols |= {"SASL_PLAINTEXT": "SASL_PLAINTEXT", "SSL": "SSL"}
    if proxy_port is not None:
        listeners["PROXIED"] = ports["PROXIED"]
        protocols["PROXIED"] = "PLAINTEXT"
    advertised = {k: v for k, v in listeners.items() if k != "CONTROLLER"}
    if proxy_port is not None:
        advertised["PROXIED"] = proxy_port  # clients of this listener are sent to the proxy
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{ports['CONTROLLER']}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listeners": ",".join(f"{k}://127.0.0.1:{v}" for k, v in listeners.items()),
        "advertised.listeners": ",".join(f"{k}://127.0.0.1:{v}" for k, v in advertised.items()),
        "listener.security.protocol.map": ",".join(f"{k}:{v}" for k, v in protocols.items()),
        "log.dirs": str(workdir / "data"),
        "num.partitions": "1",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "4",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "2",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        # retention and delete_records tests: let the cleaner run early and often
        "log.initial.task.delay.ms": "500",
        "log.retention.check.interval.ms": "1000",
        "log.retention.ms": "-1",  # old test timestamps must not expire; retention tests set it per topic
        "log.segment.delete.delay.ms": "0",
        "num.io.threads": "2",
        "num.network.threads": "2",
        "num.recovery.threads.per.data.dir": "1",
        "background.threads": "2",
    }
    if security is not None:
        plain = security.plain_user, security.plain_password
        props |= {
            "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": (
                "org.apache.kafka.common.security.plain.PlainLoginModule required "
                f'user_{plain[0]}="{plain[1]}";'
            ),
            "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            ),
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            ),
            "listener.name.ssl.ssl.keystore.location": str(security.keystore_p12),
            "listener.name.ssl.ssl.keystore.type": "PKCS12",
            "listener.name.ssl.ssl.keystore.password": security.store_password,
            "listener.name.ssl.ssl.key.password": security.store_password,
            "listener.name.ssl.ssl.client.auth": "none",
        }
    return props


def _format_storage(classpath: Path, config: Path, log: Path, security: KafkaSecurity | None) -> None:
    args = ["format", "-t", uuid.uuid4().hex[:22], "-c", str(config)]
    if security is not None:
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            args += [
                "--add-scram",
                f"{mechanism}=[name={security.scram_user},password={security.scram_password}]",
            ]
    cmd = java_command(classpath, "kafka.tools.StorageTool", args, heap="256m", jvm_args=JVM_FLAGS)
    with open(log, "ab") as out:
        done = subprocess.run(
            cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=120
        )
    if done.returncode != 0:
        raise RuntimeError(f"kafka StorageTool format failed ({done.returncode}): {log.read_text()[-2000:]}")


def _wait_metadata(broker: KafkaBroker, proc: subprocess.Popen[bytes], log: Path, timeout_s: float) -> None:
    """Wait until a metadata request answers with this broker (the JVM listens well before that).

    First until the JVM just started, ``proc``, is the one listening on the bootstrap port (after a
    restart, never an earlier instance that is still going away).
    """
    from confluent_kafka.admin import AdminClient

    deadline = time.monotonic() + timeout_s
    port = int(broker.bootstrap.rsplit(":", 1)[1])
    wait_listening("127.0.0.1", port, proc, timeout_s, log, "apache-kafka")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0, "socket.timeout.ms": 2000})
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(exit_report("apache-kafka", proc.returncode, log.read_text(errors="replace")))
        try:
            md = admin.list_topics(timeout=2)
            if md.brokers:
                return
        except Exception:  # not up yet: KafkaException until the listener answers
            time.sleep(0.2)
    tail = log.read_text(errors="replace")[-2000:]
    raise TimeoutError(f"apache-kafka on {broker.bootstrap} gave no metadata within {timeout_s}s: {tail}")


@dataclass
class _ApacheKafka(KafkaBroker):
    """A ``KafkaBroker`` whose restart waits for metadata, not only for the port."""

    listeners: dict[str, str] = field(default_factory=dict)
    """``host:port`` per listener name (PLAINTEXT, CONTROLLER, SASL_PLAINTEXT, SSL)."""

    def restart(self) -> None:
        """Start the JVM again on the same ports and log directory.

        A JVM that exits during its start-up is started once more after :data:`RESTART_RETRY_S`
        (the reason is printed, and kept in the error if the second start fails too): a test that
        restarts a broker tests its clients across the restart, not the broker's own start-up on a
        machine that three other lanes load. A second failure fails the test with both reasons.
        """
        assert self._cmd is not None and self._log is not None
        self.kill()
        self._proc = spawn_group(self._cmd, self._log, cwd=self._workdir)
        try:
            _wait_metadata(self, self._proc, self._log, START_TIMEOUT_S)
        except RuntimeError as first:
            print(f"apache-kafka restart failed, starting it once more: {first}", file=sys.stderr)
            self.kill()
            time.sleep(RESTART_RETRY_S)
            self._proc = spawn_group(self._cmd, self._log, cwd=self._workdir)
            try:
                _wait_metadata(self, self._proc, self._log, START_TIMEOUT_S)
            except RuntimeError as second:
                raise RuntimeError(f"{second} (the first start: {str(first)[:600]})") from first


def start_apache_kafka(security: KafkaSecurity | None = None, proxy_port: int | None = None) -> KafkaBroker:
    """Start Apache Kafka (``KAFKA_VERSION``) on free loopback ports; ``stop()`` removes everything.

    ``proxy_port``: also a ``PROXIED`` listener advertised as ``127.0.0.1:<proxy_port>`` (see above).
    """
    classpath = resolve_classpath("kafka", list(KAFKA_ARTIFACTS))
    workdir = Path(tempfile.mkdtemp(prefix="apache-kafka-"))
    names = ["PLAINTEXT", "CONTROLLER"] + (["SASL_PLAINTEXT", "SSL"] if security else [])
    names += ["PROXIED"] if proxy_port is not None else []
    ports = {name: free_port() for name in names}
    config, log = workdir / "server.properties", workdir / "broker.log"
    props = _properties(workdir, ports, security, proxy_port)
    config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    cmd = java_command(classpath, "kafka.Kafka", [str(config)], heap=HEAP, jvm_args=JVM_FLAGS)
    broker = _ApacheKafka(
        kind="apache-kafka",
        bootstrap=f"127.0.0.1:{ports['PLAINTEXT']}",
        _cmd=cmd,
        _log=log,
        _workdir=workdir,
        listeners={name: f"127.0.0.1:{port}" for name, port in ports.items()},
    )
    try:
        _format_storage(classpath, config, log, security)
        broker._proc = spawn_group(cmd, log, cwd=workdir)
        _wait_metadata(broker, broker._proc, log, START_TIMEOUT_S)
    except BaseException:
        broker.stop()
        raise
    return broker
