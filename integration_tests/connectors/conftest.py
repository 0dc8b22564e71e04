"""Fixtures shared by the connectors' broker tests: one schema registry for the whole session.

``schema_registry`` is Apicurio Registry 2.6.13 (a child JVM from its Maven Central distribution,
see :mod:`sparkflow_testing.registry.apicurio`) with its secure front (TLS, client certificates,
basic and bearer credentials); its gaps against Confluent's registry are declared, and
``require_registry(server, *gaps)`` skips a test that needs one of them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sparkflow_testing.registry.apicurio import Gap, SchemaRegistryServer, start_apicurio


@pytest.fixture(scope="session")
def schema_registry() -> Iterator[SchemaRegistryServer]:
    """A running registry (plain ``url`` and TLS/auth ``secure_url``), stopped after the session."""
    server = start_apicurio(secure=True)
    yield server
    server.stop()


def require_registry(server: SchemaRegistryServer, *gaps: Gap) -> None:
    """Skip the test when ``server`` gets any of ``gaps`` wrong."""
    reason = server.gap_reason(*gaps)
    if reason:
        pytest.skip(reason)
