"""Fixtures for Pravega-backed tests: a session-wide cluster (real Pravega in Docker, else the emulator).

The logic lives in :mod:`connectors.testing.pravega_cluster`; set ``PRAVEGA_BACKEND=emulator`` to
use the emulator even where Docker answers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connectors.testing.pravega_cluster import PravegaCluster
from connectors.testing.pravega_cluster import pravega_cluster as _start_cluster


@pytest.fixture(scope="session")
def pravega_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PravegaCluster]:
    """A running Pravega for the whole session; ``.backend`` says which, ``.control`` is emulator-only."""
    with _start_cluster(log_dir=tmp_path_factory.mktemp("pravega")) as cluster:
        yield cluster
        cluster.close()


@pytest.fixture
def emulator_cluster(pravega_cluster: PravegaCluster) -> PravegaCluster:
    """The session cluster, skipping the test unless it is the emulator (for control-interface tests)."""
    if not pravega_cluster.is_emulator:
        pytest.skip("needs the emulator's control interface")
    return pravega_cluster
