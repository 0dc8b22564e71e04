"""Fixtures for Pravega-backed tests: one cluster per backend per session, started when first asked for.

``pravega_cluster`` is the run's backend (:func:`sparkflow_testing.pravega.cluster.default_backend`:
``$PRAVEGA_BACKEND``, else the real standalone server where Java and Maven exist, else the emulator).
``any_pravega_cluster`` is parametrized over both backends, for the conformance and wire suites;
with ``PRAVEGA_BACKEND`` set only that backend runs. The logic lives in
:mod:`sparkflow_testing.pravega.cluster`.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkflow_testing.pravega.cluster import BACKEND_ENV, Backend, PravegaCluster, default_backend
from sparkflow_testing.pravega.cluster import pravega_cluster as _start_cluster

BOTH_BACKENDS = (Backend.STANDALONE, Backend.EMULATOR)


class _Clusters:
    """The session's clusters by backend, each started on first use and stopped at the end."""

    def __init__(self, log_root: Path) -> None:
        self._log_root = log_root
        self._stack = contextlib.ExitStack()
        self._clusters: dict[str, PravegaCluster] = {}
        self.start_seconds: dict[str, float] = {}

    def get(self, backend: str) -> PravegaCluster:
        cluster = self._clusters.get(backend)
        if cluster is None:
            began = time.monotonic()
            log_dir = self._log_root / backend
            log_dir.mkdir(parents=True, exist_ok=True)
            cluster = self._stack.enter_context(_start_cluster(log_dir=log_dir, backend=backend))
            self.start_seconds[backend] = time.monotonic() - began
            self._clusters[backend] = cluster
        return cluster

    def close(self) -> None:
        for cluster in self._clusters.values():
            cluster.close()
        self._stack.close()


@pytest.fixture(scope="session")
def pravega_clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Clusters]:
    """Every backend this session has started (see :class:`_Clusters`)."""
    clusters = _Clusters(tmp_path_factory.mktemp("pravega"))
    yield clusters
    clusters.close()


@pytest.fixture(scope="session")
def pravega_cluster(pravega_clusters: _Clusters) -> PravegaCluster:
    """The run's Pravega for the whole session; ``.backend`` says which, ``.admin`` scales/truncates."""
    return pravega_clusters.get(default_backend())


@pytest.fixture(params=BOTH_BACKENDS)
def any_pravega_cluster(request: pytest.FixtureRequest, pravega_clusters: _Clusters) -> PravegaCluster:
    """The session cluster of each backend in turn (only ``$PRAVEGA_BACKEND``'s when it is set)."""
    chosen = os.environ.get(BACKEND_ENV, "").strip().lower()
    if chosen and chosen != request.param:
        pytest.skip(f"{BACKEND_ENV}={chosen} runs one backend")
    return pravega_clusters.get(request.param)


@pytest.fixture
def emulator_cluster(pravega_clusters: _Clusters) -> PravegaCluster:
    """The session's emulator, for checks of the emulator itself (its control interface, restarts)."""
    return pravega_clusters.get(Backend.EMULATOR)
