"""Real services for the Async I/O tests: the scripted aiohttp service and a redis-server, per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sparkflow_testing.services.redis_server import RedisServer, start_redis
from sparkflow_testing.services.scripted_http_service import HttpService, start_http_service


@pytest.fixture(scope="session")
def http_service() -> Iterator[HttpService]:
    service = start_http_service(latency_ms=10.0)
    yield service
    service.stop()


@pytest.fixture
def service(http_service: HttpService) -> HttpService:
    """The session's service with its counters cleared."""
    http_service.reset()
    return http_service


@pytest.fixture(scope="session")
def redis_db() -> Iterator[RedisServer]:
    server = start_redis()
    yield server
    server.stop()
