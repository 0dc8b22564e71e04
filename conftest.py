"""Shared pytest fixtures: one local Spark session for the whole test run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A ``local[2]`` SparkSession; ``PYSPARK_PYTHON`` is set to this interpreter before it starts."""
    from connector_base.spark import local_spark_session

    session = local_spark_session("tests", cores=2)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
