"""Fixtures for Kinesis-backed tests: a session-wide endpoint per available implementation.

``kinesis_endpoint`` runs each test on LocalStack (Testcontainers, only where a Docker engine
answers), on a ``moto`` server, and on ``kinesalite`` when it is installed
(``npm install --no-save --prefix .kinesalite kinesalite@3.3.3``). Set ``KINESIS_ENDPOINTS`` (comma
separated kinds) to choose. The logic lives in :mod:`sparkflow_testing.kinesis.endpoint`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from sparkflow_testing.kinesis.endpoint import KinesisEndpoint, available_endpoint_kinds, start_endpoint


def _kinds() -> list[str]:
    wanted = os.environ.get("KINESIS_ENDPOINTS")
    if wanted:
        return [k.strip() for k in wanted.split(",") if k.strip()]
    return available_endpoint_kinds()


_STARTED: dict[str, KinesisEndpoint] = {}


@pytest.fixture(scope="session", params=_kinds())
def kinesis_endpoint(request: pytest.FixtureRequest) -> Iterator[KinesisEndpoint]:
    """A running endpoint for the whole session (one per kind); its ``gaps`` say what it gets wrong."""
    kind = request.param
    try:
        endpoint = start_endpoint(kind)
    except FileNotFoundError as e:
        pytest.skip(str(e))
    try:
        yield endpoint
    finally:
        endpoint.stop()


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The package's shared local[2] SparkSession."""
    from connector_base.spark import local_spark_session

    session = local_spark_session("kinesis-tests", cores=2)
    session.sparkContext.setLogLevel("ERROR")
    yield session
