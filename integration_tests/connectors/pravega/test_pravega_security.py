"""TLS and password authentication end to end, on a second, secured Pravega standalone.

The module starts its own standalone server with TLS and authentication on (certificates and the
password file made by :func:`sparkflow_testing.pravega.security.make_security`), writes through
the ``pravega`` sink and reads back through ``format("pravega")``; a wrong password and an untrusted
certificate fail fast with a clear message that never carries the password.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pravega_helpers import spark

from sparkflow_testing.pravega.cluster import unique_name
from sparkflow_testing.pravega.security import make_security
from sparkflow_testing.pravega.standalone import PravegaStandalone

pytestmark = [pytest.mark.integration, pytest.mark.spark]
__all__ = ["spark"]

USER = "sparkflow"
PASSWORD = "pw-" + unique_name("")  # fresh per run, so a leak is recognisable
FAIL_FAST_S = 60.0
"""A refused connection must fail within this (the gRPC call deadline is 30 s)."""


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PravegaStandalone]:
    """A standalone server with TLS and password authentication, for this module only."""
    work = tmp_path_factory.mktemp("pravega-secured")
    server = PravegaStandalone(work, make_security(work / "security", USER, PASSWORD))
    server.start()
    yield server
    server.stop()


def _options(server: PravegaStandalone, scope: str, stream: str, **extra: str) -> dict[str, str]:
    assert server.security.ca_cert is not None
    return {
        "controller": server.controller_uri,
        "scope": scope,
        "stream": stream,
        "tls_enabled": "true",
        "trust_store": str(server.security.ca_cert),
        "auth_enabled": "true",
        "username": USER,
        "password": PASSWORD,
        **extra,
    }


@pytest.mark.timeout(400)
def test_write_and_read_with_tls_and_a_password(secured: PravegaStandalone, spark: Any) -> None:
    scope, stream = unique_name("sec"), unique_name("st")
    rows = [(f"s:k{i % 4}:{i:06d}", f"k{i % 4}") for i in range(300)]
    df = spark.createDataFrame(rows, "event string, routing_key string").repartition(2)
    create = {"allow_create_scope": "true", "allow_create_stream": "true", "segments": "2"}
    opts = _options(secured, scope, stream, **create)
    df.write.format("pravega").options(**opts).mode("append").save()
    got = spark.read.format("pravega").options(**_options(secured, scope, stream)).load().collect()
    assert sorted(bytes(r["event"]).decode() for r in got) == sorted(e for e, _k in rows)


@pytest.mark.timeout(200)
def test_wrong_password_fails_fast_without_the_secret(secured: PravegaStandalone, spark: Any) -> None:
    wrong = "not-" + PASSWORD
    options = _options(secured, "any", "stream", password=wrong)
    started = time.monotonic()
    # match=: any other failure (Spark's worker start limit on a loaded machine) surfaces whole
    with pytest.raises(Exception, match="UNAUTHENTICATED") as info:
        spark.read.format("pravega").options(**options).load().collect()
    message = str(info.value)
    assert time.monotonic() - started < FAIL_FAST_S
    assert wrong not in message and PASSWORD not in message


@pytest.mark.timeout(200)
def test_untrusted_certificate_fails_fast(secured: PravegaStandalone, spark: Any, tmp_path: Path) -> None:
    other = make_security(tmp_path / "other", USER, PASSWORD)  # a different CA
    assert other.ca_cert is not None
    options = _options(secured, "any", "stream", trust_store=str(other.ca_cert))
    started = time.monotonic()
    with pytest.raises(Exception, match="UNAVAILABLE") as info:
        spark.read.format("pravega").options(**options).load().collect()
    assert time.monotonic() - started < FAIL_FAST_S
    assert PASSWORD not in str(info.value)
