"""Client errors that retrying cannot fix: failed SASL authentication and failed TLS handshakes.

librdkafka treats a wrong password or an untrusted broker certificate as a transient connection
error and retries it for ever; the caller only sees a timeout ("Broker transport failure"). These
helpers catch the real cause as it is reported (within a second of connecting) so that ``load()``,
``start()`` or the first batch fails with it. librdkafka's messages name the mechanism or the
certificate check, never the secret.
"""

from __future__ import annotations

from typing import Any

from connector_base import ConnectorError

__all__ = ["ConnectErrorWatch", "unrecoverable_cause"]

_HINTS = {
    "_AUTHENTICATION": "check kafka.sasl.mechanism and the user and password in kafka.sasl.jaas.config",
    "_SSL": (
        "check kafka.ssl.truststore.location/type/password (or kafka.ssl.ca.location) and that the "
        "broker's certificate names the host in kafka.bootstrap.servers"
    ),
}


def unrecoverable_cause(error: Any) -> str | None:
    """A message for a librdkafka ``KafkaError`` that retrying cannot fix, else ``None``."""
    name = error.name()
    if name in _HINTS:
        return f"{error.str()} ({_HINTS[name]})"
    if error.fatal():
        return error.str()
    return None


_UNREACHABLE = frozenset({"_RESOLVE", "_TRANSPORT"})
"""librdkafka's reports that one server cannot be reached (its "all brokers down" can come early)."""


class ConnectErrorWatch:
    """An ``error_cb`` for a librdkafka client that keeps the first unrecoverable error, and the
    last report that a server cannot be reached (``unreachable``, for ``reachability.first_contact``).

    Threading: librdkafka calls it from whichever thread polls the client; it only stores strings.
    """

    def __init__(self, what: str) -> None:
        self._what = what
        self.cause: str | None = None
        self.unreachable: str | None = None

    def __call__(self, error: Any) -> None:
        """Keep ``error`` if it is the first unrecoverable one, or a server's "cannot reach"."""
        if error.name() in _UNREACHABLE:
            self.unreachable = error.str()
        if self.cause is None:
            self.cause = unrecoverable_cause(error)

    def raise_if_failed(self) -> None:
        """Raise ``ConnectorError`` naming the cause if one was reported."""
        if self.cause is not None:
            raise ConnectorError(f"{self._what} failed: {self.cause}")
