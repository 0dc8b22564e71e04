"""Fixtures of the files-unified Spark tests.

The one session-scoped ``local[2]`` SparkSession is the ``spark`` fixture of the repository's root
``conftest.py`` (created with ``connector_base.spark.local_spark_session``, so ``PYSPARK_PYTHON`` is
set before it starts); every test here shares it. No broker is needed: data are local files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest


def write_jsonl(directory: Path, name: str, records: Iterable[dict[str, Any]]) -> Path:
    """Write a jsonl file atomically (hidden temporary name, then rename), as producers should."""
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{name}.tmp"
    tmp.write_text("".join(json.dumps(r) + "\n" for r in records))
    final = directory / name
    os.replace(tmp, final)
    return final


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """An empty directory for one test's input files."""
    d = tmp_path / "in"
    d.mkdir()
    return d
