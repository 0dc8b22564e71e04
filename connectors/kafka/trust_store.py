"""Java trust stores (JKS, PKCS12) as PEM text for librdkafka, which reads neither.

``kafka.ssl.truststore.location`` with ``kafka.ssl.truststore.type`` JKS (Java's default) or PKCS12
is read once, where the options are parsed (the driver, at ``load()``), and its trusted
certificates are handed to librdkafka as ``ssl.ca.pem``; so executors need no copy of the file. A
password, when given, is checked as Java checks it (the JKS integrity digest, the PKCS12 MAC). Only
certificates are taken: a trust store holds no private keys, and a key entry in one is skipped.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct
import textwrap
from pathlib import Path

from connector_base import InvalidOptionError

__all__ = ["trust_store_pem"]

_JKS_MAGIC = 0xFEEDFEED
_JCEKS_MAGIC = 0xCECECECE
_JKS_PRIVATE_KEY, _JKS_TRUSTED_CERT = 1, 2
_JKS_DIGEST_SALT = b"Mighty Aphrodite"  # the constant Java's JKS integrity check mixes in
_LOCATION, _PASSWORD = "kafka.ssl.truststore.location", "kafka.ssl.truststore.password"


def trust_store_pem(location: str, kind: str, password: str | None) -> str:
    """The certificates in the ``kind`` (JKS or PKCS12) trust store at ``location``, as PEM text."""
    try:
        data = Path(location).read_bytes()
    except OSError as e:
        raise InvalidOptionError(_LOCATION, location, f"a readable {kind} trust store ({e.strerror})") from e
    ders = (
        _jks_certificates(data, password, location)
        if kind == "JKS"
        else _pkcs12_certificates(data, password, location)
    )
    if not ders:
        raise InvalidOptionError(
            _LOCATION, location, f"a {kind} trust store holding at least one certificate"
        )
    return "".join(_pem(der) for der in ders)


def _pem(der: bytes) -> str:
    body = "\n".join(textwrap.wrap(base64.b64encode(der).decode(), 64))
    return f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n"


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError("truncated")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def u16(self) -> int:
        return int(struct.unpack(">H", self.take(2))[0])

    def u32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def certificate(self, version: int) -> bytes:
        if version == 2:
            self.take(self.u16())  # certificate type, "X.509"
        return self.take(self.u32())


def _jks_certificates(data: bytes, password: str | None, location: str) -> list[bytes]:
    """Trusted certificates of a JKS store (Java's ``sun.security.provider.JavaKeyStore`` layout)."""
    cursor = _Cursor(data)
    try:
        magic, version = cursor.u32(), cursor.u32()
        if magic == _JCEKS_MAGIC:
            raise InvalidOptionError(_LOCATION, location, "a JKS or PKCS12 trust store (JCEKS is not read)")
        if magic != _JKS_MAGIC or version not in (1, 2):
            raise InvalidOptionError(
                _LOCATION,
                location,
                "a JKS trust store (set kafka.ssl.truststore.type to PKCS12 or PEM if it is one)",
            )
        found: list[bytes] = []
        for _ in range(cursor.u32()):
            tag = cursor.u32()
            cursor.take(cursor.u16())  # alias
            cursor.take(8)  # creation time
            if tag == _JKS_TRUSTED_CERT:
                found.append(cursor.certificate(version))
            elif tag == _JKS_PRIVATE_KEY:
                cursor.take(cursor.u32())  # the protected key
                for _ in range(cursor.u32()):
                    cursor.certificate(version)
            else:
                raise ValueError(f"entry tag {tag}")
        body_end = cursor.pos
        digest = cursor.take(20)
    except ValueError as e:
        raise InvalidOptionError(_LOCATION, location, f"a well-formed JKS trust store ({e})") from e
    if password is not None:
        expected = hashlib.sha1(  # Java's own integrity check of a JKS file, not a security measure here
            password.encode("utf-16-be") + _JKS_DIGEST_SALT + data[:body_end], usedforsecurity=False
        ).digest()
        if not hmac.compare_digest(expected, digest):
            raise InvalidOptionError(
                _PASSWORD, "<redacted>", f"the password of the JKS trust store {location}"
            )
    return found


def _pkcs12_certificates(data: bytes, password: str | None, location: str) -> list[bytes]:
    try:
        from cryptography.hazmat.primitives.serialization import Encoding, pkcs12
    except ImportError as e:
        raise InvalidOptionError(
            "kafka.ssl.truststore.type",
            "PKCS12",
            "PEM or JKS, or install the 'cryptography' package to read PKCS12 trust stores",
        ) from e
    try:
        store = pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError as e:
        shown = "<redacted>" if password is not None else None
        raise InvalidOptionError(
            _PASSWORD, shown, f"the password of the PKCS12 trust store {location} (or a valid PKCS12 file)"
        ) from e
    certs = ([store.cert] if store.cert is not None else []) + list(store.additional_certs)
    return [c.certificate.public_bytes(Encoding.DER) for c in certs]
