"""``sparkflow_daemon`` and ``sparkflow-python``: Spark's Python processes (task workers and the
workers that plan Python data sources) import pyspark from site-packages, and only when it matches."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import psutil
import pyspark
import pytest

import sparkflow_daemon
from connector_base.spark.session import pyspark_python


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


@pytest.mark.spark
def test_planning_workers_import_pyspark_from_site_packages(spark: Any) -> None:
    """The process that runs a Python data source's ``schema()`` at ``load()`` (``create_data_source``,
    under Spark's default daemon whatever ``spark.python.daemon.module`` says) starts through
    ``sparkflow-python``, so it imports pyspark compiled from site-packages, not from Spark's zip."""
    from pyspark.sql.datasource import DataSource

    class PlannerOrigin(DataSource):
        @classmethod
        def name(cls) -> str:
            return "planner_origin"

        def schema(self) -> str:
            import pyspark as planner_pyspark

            return "zip STRING" if ".zip" in planner_pyspark.__file__ else "site_packages STRING"

    assert os.environ["PYSPARK_PYTHON"].endswith("sparkflow-python")
    spark.dataSource.register(PlannerOrigin)
    assert spark.read.format("planner_origin").load().columns == ["site_packages"]


def _children_of(pid: int) -> list[str]:
    """The command lines of the processes whose parent is ``pid``."""
    lines = []
    for child in psutil.Process(pid).children():
        with contextlib.suppress(psutil.NoSuchProcess):  # a process that ended while listed
            lines.append(" ".join(child.cmdline()))
    return lines


@pytest.mark.spark
def test_a_format_spark_finds_itself_is_planned_through_sparkflow_python(spark: Any, tmp_path: Path) -> None:
    """Spark starts the planners of a data source it found itself (this package's ``pyspark_*``
    modules, such as ``files-unified``) with ``PYSPARK_DRIVER_PYTHON``, not ``PYSPARK_PYTHON``: both
    point at ``sparkflow-python``, so ``load()`` of a session's first query imports pyspark compiled."""
    (tmp_path / "a.txt").write_text("x\n")
    assert spark.read.format("files-unified").option("format", "text").load(str(tmp_path)).columns
    jvm = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    planners = [line for line in _children_of(jvm) if "pyspark.sql.worker.create_data_source" in line]
    assert planners and all("sparkflow-python" in line for line in planners), planners
    assert os.environ["PYSPARK_DRIVER_PYTHON"] == os.environ["PYSPARK_PYTHON"] == pyspark_python()


def test_sparkflow_python_runs_a_module_without_the_zips_and_execs_anything_else(tmp_path: Any) -> None:
    script = pyspark_python()
    assert script.endswith("sparkflow-python"), "the package's script is installed (make venv)"
    zips = [str(p) for p in (Path(pyspark.__file__).parent / "python" / "lib").glob("*.zip")]
    assert zips, "the pyspark wheel ships pyspark.zip and py4j's zip"
    # the module and what it imports sit in the working directory, as `python -m` finds them
    (tmp_path / "probe_origin.py").write_text(
        "import json, sys, pyspark, probe_neighbour\n"
        "print(json.dumps([pyspark.__file__, sys.argv[1:], sys.path[0]]))\n"
    )
    (tmp_path / "probe_neighbour.py").write_text("")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(zips)}
    out = subprocess.run(
        [script, "-m", "probe_origin", "a", "b"], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    origin, argv, first = json.loads(out.stdout)
    assert ".zip" not in origin and argv == ["a", "b"] and first == str(tmp_path)
    # -c runs in the script's own process (Spark's version probe, once per data source found), with
    # the argv, path and __main__ of `python -c`
    probe = (
        "import os, sys; print([sys.argv, 'sparkflow_python' in sys.modules, sys.path[0], __name__, "
        f"{os.path.dirname(script)!r} in sys.path])"
    )
    command = subprocess.run([script, "-c", probe, "x"], env=env, capture_output=True, text=True)
    # as `python -c`: the script's own directory is not on the path
    assert command.stdout.strip() == "[['-c', 'x'], True, '', '__main__', False]", command.stderr
    failing = subprocess.run([script, "-c", "raise SystemExit(3)"], env=env, capture_output=True)
    assert failing.returncode == 3
    flagged = subprocess.run(  # an interpreter flag first: handed to the interpreter unchanged
        [script, "-I", "-c", "import sys; print(sys.flags.isolated)"], env=env, capture_output=True, text=True
    )
    assert flagged.stdout.strip() == "1"


def _in_fresh_interpreter(code: str, **env: str) -> Any:
    environment = {k: v for k, v in os.environ.items() if k != sparkflow_daemon.PRELOAD_ENV}
    out = subprocess.run(
        [sys.executable, "-c", code], env={**environment, **env}, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


_PRELOAD_REPORT = """
import json, os, sys, sparkflow_daemon as d
imported, unsafe = d.preload(d.preload_modules("pyspark.worker", os.environ.get(d.PRELOAD_ENV)))
print(json.dumps({"imported": imported, "unsafe": unsafe, "threads": len(os.listdir("/proc/self/task")),
                  "loaded": [m for m in ("pyarrow", "connector_base.spark.bridge") if m in sys.modules],
                  "pandas": "pandas" in sys.modules}))
"""


def test_preloading_imports_the_read_modules_and_leaves_one_thread() -> None:
    report = _in_fresh_interpreter(_PRELOAD_REPORT)
    assert report["unsafe"] is None
    assert {"pyspark.worker", "pyarrow", "pandas", "connector_base.spark.bridge"} <= set(report["imported"])
    # pyarrow (numpy's OpenBLAS, libarrow's jemalloc) starts native threads unless told not to
    assert report["threads"] == 1


def test_preloading_is_switched_off_or_listed_and_skips_missing_modules() -> None:
    assert _in_fresh_interpreter(_PRELOAD_REPORT, SPARKFLOW_DAEMON_PRELOAD="0")["loaded"] == []
    listed = _in_fresh_interpreter(_PRELOAD_REPORT, SPARKFLOW_DAEMON_PRELOAD="no_such_module_x, pyarrow")
    assert listed["imported"] == ["pyarrow"] and listed["loaded"] == ["pyarrow"]
    added = _in_fresh_interpreter(_PRELOAD_REPORT, SPARKFLOW_DAEMON_PRELOAD="+json")
    assert added["imported"][-1] == "json" and "connector_base.spark.bridge" in added["loaded"]


def test_preloading_stops_at_a_module_that_starts_a_thread(tmp_path: Path) -> None:
    (tmp_path / "starts_a_thread.py").write_text(
        "import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
    )
    code = f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n" + _PRELOAD_REPORT
    report = _in_fresh_interpreter(code, SPARKFLOW_DAEMON_PRELOAD="json,starts_a_thread,pyarrow")
    assert report["imported"] == ["json", "starts_a_thread"] and report["unsafe"] == "starts_a_thread"


@pytest.mark.spark
def test_spark_workers_are_forked_with_the_read_modules_loaded_from_a_one_thread_daemon(spark: Any) -> None:
    def loaded(_rows: Any) -> Any:
        import gc
        import os
        import sys

        preloaded = all(m in sys.modules for m in ("connector_base.spark.bridge", "pyarrow", "pandas"))
        daemon_threads = len(os.listdir(f"/proc/{os.getppid()}/task"))
        # what the daemon imported was frozen before fork: out of each task's closing collection
        yield preloaded, daemon_threads, gc.get_freeze_count() > 10_000

    results = set(spark.sparkContext.parallelize([1, 2], 2).mapPartitions(loaded).collect())
    assert results == {(True, 1, True)}, results


@pytest.mark.spark
def test_the_session_talks_to_its_python_workers_over_unix_domain_sockets(spark: Any) -> None:
    """Over loopback TCP each Python task of a read waited about 40 ms for a delayed acknowledgement
    (a Python data source's task 70 ms against 33 ms over a Unix domain socket, measured here)."""

    def connection(_rows: Any) -> Any:
        import os
        import socket

        kinds = set()
        for fd in os.listdir("/proc/self/fd"):
            try:
                sock = socket.socket(fileno=os.dup(int(fd)))
            except OSError:
                continue
            kinds.add(sock.family.name)
            sock.close()
        yield os.environ.get("PYTHON_UNIX_DOMAIN_ENABLED", "").lower(), "AF_UNIX" in kinds, "AF_INET" in kinds

    assert spark.conf.get("spark.python.unix.domain.socket.enabled") == "true"
    results = set(spark.sparkContext.parallelize([1, 2], 2).mapPartitions(connection).collect())
    assert results == {("true", True, False)}, results
