"""``sparkflow_daemon``: Spark's workers import pyspark from site-packages, and only when it matches."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from typing import Any

import pyspark
import pytest

import sparkflow_daemon


def _fake_zip(path: Path, package: str, version: str) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{package}/__init__.py", "")
        archive.writestr(f"{package}/version.py", f'__version__: str = "{version}"\n')
    return str(path)


def test_a_zip_of_the_installed_version_leaves_the_path(tmp_path: Path, monkeypatch: Any) -> None:
    same = _fake_zip(tmp_path / "pyspark.zip", "pyspark", pyspark.__version__)
    monkeypatch.setattr(sys, "path", [same, *sys.path])
    assert sparkflow_daemon.drop_duplicate_zips() == [same]
    assert same not in sys.path


def test_a_zip_of_another_version_stays(tmp_path: Path, monkeypatch: Any) -> None:
    other = _fake_zip(tmp_path / "pyspark.zip", "pyspark", "3.0.0")
    broken = tmp_path / "py4j-0.10.9.9-src.zip"
    broken.write_bytes(b"not a zip")
    monkeypatch.setattr(sys, "path", [other, str(broken), *sys.path])
    assert sparkflow_daemon.drop_duplicate_zips() == []
    assert sys.path[:2] == [other, str(broken)]


@pytest.mark.spark
def test_spark_workers_import_pyspark_from_site_packages(spark: Any) -> None:
    def origin(_rows: Any) -> Any:
        import pyspark as worker_pyspark

        yield worker_pyspark.__file__

    files = set(spark.sparkContext.parallelize([1, 2], 2).mapPartitions(origin).collect())
    assert files and all(".zip" not in f for f in files), files
    assert spark.conf.get("spark.python.daemon.module") == "sparkflow_daemon"
