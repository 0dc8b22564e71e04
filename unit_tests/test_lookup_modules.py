"""The ``pyspark_*`` modules Spark's lookup imports: cheap to import, each standing for its connector."""

from __future__ import annotations

import importlib
import importlib.util
import pickle
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from pyspark import cloudpickle
from pyspark.sql.datasource import DataSource

ROOT = Path(__file__).resolve().parents[1]
LOOKUP_MODULES = [
    m
    for m in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["py-modules"]
    if m.startswith("pyspark_")
]


def test_every_format_has_a_lookup_module() -> None:
    """Each ``pyspark_*`` module the distribution lists is importable (from a checkout or a wheel)."""
    assert len(LOOKUP_MODULES) == 6
    assert all(importlib.util.find_spec(m) is not None for m in LOOKUP_MODULES)


def test_importing_every_lookup_module_imports_no_connector_and_no_pyarrow() -> None:
    """What Spark's lookup worker pays: pyspark's own modules, nothing of the connectors."""
    script = (
        "import sys\n"
        f"for name in {LOOKUP_MODULES!r}:\n"
        "    __import__(name)\n"
        "heavy = ('connectors', 'connector_base', 'pyarrow')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("module_name", LOOKUP_MODULES)
def test_a_lookup_class_creates_its_connectors_data_source(module_name: str, tmp_path: Path) -> None:
    lazy = importlib.import_module(module_name).DefaultSource
    assert issubclass(lazy, DataSource)  # what Spark's lookup checks
    real = lazy.resolve()
    assert real is not lazy and issubclass(real, DataSource)
    assert lazy.name() == real.name()
    # Spark's lookup hands the class to the planner pickled (by reference, so the planner imports
    # only this module), and the planner creates it with the query's options
    unpickled = pickle.loads(cloudpickle.dumps(lazy))
    assert unpickled is lazy
    options = (
        {"path": str(tmp_path), "format": "text"} if module_name == "pyspark_files_unified" else {"a": "1"}
    )
    created = unpickled(options=options)
    assert type(created) is real and created.options == options
    assert type(lazy(dict(options))) is real  # positional, as the hybrid source creates its stages
