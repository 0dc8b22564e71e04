"""TLS material and a password file for a secured Pravega standalone, made fresh for a test run.

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
from pathlib import Path

from connectors.testing.pravega_standalone import StandaloneSecurity

__all__ = ["make_security", "password_file_line"]

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
