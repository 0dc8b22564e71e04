"""Security of a Pravega standalone: its settings (:class:`StandaloneSecurity`) and the files they name.

:class:`StandaloneSecurity` is what :class:`~sparkflow_testing.pravega.standalone.PravegaStandalone`
and :func:`~sparkflow_testing.pravega.admin.admin_for` take: TLS and authentication settings.
:func:`make_security` writes into a directory: a certificate for ``localhost`` and
``127.0.0.1`` signed by a throw-away CA, with its PKCS#8 key (``openssl``), the same key pair in a
JKS key store and the CA in a JKS trust store (``keytool``, which comes with the JDK), and a password file in
the format of Pravega's ``PasswordAuthHandler``: ``user:<hex of "iterations:salt:hash">:acl`` with
PBKDF2-HMAC-SHA256, 5000 iterations, a 32-byte salt and a 64-byte hash (read from Pravega's
``StrongPasswordProcessor``). It returns the :class:`StandaloneSecurity` that uses them.

Threading: none.
"""

from __future__ import annotations

import hashlib
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["StandaloneSecurity", "make_security", "password_file_line"]


@dataclass(frozen=True)
class StandaloneSecurity:
    """TLS and authentication settings of a standalone server (files made by the caller).

    ``cert``/``key`` are PEM files (the segment store and the controller's gRPC server),
    ``ca_cert`` the PEM certificate clients trust,
    ``keystore``/``keystore_password_file``/``truststore`` JKS files (the controller's clients),
    ``password_file`` the accounts database (``user:hash:acl`` lines), ``username``/``password``
    the credentials the in-process controller uses towards the segment store.
    """

    tls: bool = False
    cert: Path | None = None
    ca_cert: Path | None = None
    key: Path | None = None
    keystore: Path | None = None
    keystore_password_file: Path | None = None
    truststore: Path | None = None
    auth: bool = False
    password_file: Path | None = None
    username: str = ""
    password: str = ""

    def properties(self) -> dict[str, str]:
        """The ``singlenode.security.*`` system properties."""
        props = {
            "singlenode.security.tls.enable": str(self.tls).lower(),
            "singlenode.security.auth.enable": str(self.auth).lower(),
        }
        if self.tls:
            props.update({
                "singlenode.security.tls.protocolVersion": "TLSv1.2,TLSv1.3",
                "singlenode.security.tls.certificate.location": str(self.cert),
                "singlenode.security.tls.privateKey.location": str(self.key),
                "singlenode.security.tls.keyStore.location": str(self.keystore),
                "singlenode.security.tls.keyStore.pwd.location": str(self.keystore_password_file),
                "singlenode.security.tls.trustStore.location": str(self.truststore),
            })  # fmt: skip
        if self.auth:
            props.update({
                "singlenode.security.auth.pwdAuthHandler.accountsDb.location": str(self.password_file),
                "singlenode.security.auth.credentials.username": self.username,
                "singlenode.security.auth.credentials.pwd": self.password,
            })  # fmt: skip
        return props


_ITERATIONS = 5000
_SALT_BYTES = 32
_HASH_BYTES = 64
_ALL_ACCESS = "prn::*,READ_UPDATE;"
_ZK_TRUST_STORE_PASSWORD = "1111_aaaa"
"""The standalone's in-process ZooKeeper client opens the trust store with this fixed password
(``InProcPravegaCluster``), so the test key stores use it; they protect throw-away test keys."""


def password_file_line(username: str, password: str, acl: str = _ALL_ACCESS) -> str:
    """One line of Pravega's password file for ``username``."""
    salt = secrets.token_bytes(_SALT_BYTES)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, _ITERATIONS, _HASH_BYTES)
    encoded = f"{_ITERATIONS}:{salt.hex()}:{digest.hex()}".encode().hex()
    return f"{username}:{encoded}:{acl}"


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed: {done.stderr[-1000:]}")


def make_security(directory: Path, username: str, password: str, tls: bool = True) -> StandaloneSecurity:
    """Write certificates, key stores and a password file into ``directory``; return their settings."""
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / "server.pem", directory / "server.key"
    keystore, truststore = directory / "server.jks", directory / "truststore.jks"
    store_password = _ZK_TRUST_STORE_PASSWORD
    store_password_file = directory / "keystore.pwd"
    if tls:
        # A CA and a leaf signed by it: rustls (the official client) refuses a self-signed leaf
        # and certificates for IP addresses, so clients connect to ``localhost``.
        ca_key, ca_cert = directory / "ca.key", directory / "ca.pem"
        _run([
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-keyout", str(ca_key), "-out", str(ca_cert), "-subj", "/CN=sparkflow test CA",
        ])  # fmt: skip
        csr, extensions = directory / "server.csr", directory / "server.ext"
        extensions.write_text(
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
            "extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n"
        )
        _run([
            "openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
            "-out", str(csr), "-subj", "/CN=localhost",
        ])  # fmt: skip
        _run([
            "openssl", "x509", "-req", "-in", str(csr), "-CA", str(ca_cert), "-CAkey", str(ca_key),
            "-CAcreateserial", "-days", "2", "-out", str(cert), "-extfile", str(extensions),
        ])  # fmt: skip
        p12 = directory / "server.p12"
        _run([
            "openssl", "pkcs12", "-export", "-in", str(cert), "-inkey", str(key), "-name", "server",
            "-out", str(p12), "-passout", f"pass:{store_password}",
        ])  # fmt: skip
        _run([
            "keytool", "-importkeystore", "-noprompt", "-srckeystore", str(p12), "-srcstoretype", "PKCS12",
            "-srcstorepass", store_password, "-destkeystore", str(keystore), "-deststoretype", "JKS",
            "-deststorepass", store_password,
        ])  # fmt: skip
        _run([
            "keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", str(ca_cert),
            "-keystore", str(truststore), "-storetype", "JKS", "-storepass", store_password,
        ])  # fmt: skip
        store_password_file.write_text(store_password)
    accounts = directory / "passwd"
    accounts.write_text(password_file_line(username, password) + "\n")
    return StandaloneSecurity(
        tls=tls,
        cert=cert if tls else None,
        ca_cert=directory / "ca.pem" if tls else None,
        key=key if tls else None,
        keystore=keystore if tls else None,
        keystore_password_file=store_password_file if tls else None,
        truststore=truststore if tls else None,
        auth=True,
        password_file=accounts,
        username=username,
        password=password,
    )
