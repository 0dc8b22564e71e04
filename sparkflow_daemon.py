"""Spark's Python worker daemon, importing pyspark from the installed package instead of its zip.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` (and py4j's zip) first on every Python worker's
path. Python compiles modules imported from a zip from source every time (it never caches their
bytecode), and Spark's daemon imports the worker module after each fork, so every new worker, and
every planning worker of a Python data source (one daemon per kind), spends about a second compiling
pyspark; a pip-installed pyspark has the same files, compiled, in site-packages. Measured here:
``import pyspark.sql, pyspark.worker`` takes 1.24 s from the zip and 0.24 s from site-packages, and
``importlib.invalidate_caches()``, which each fresh worker calls, re-reads the zip's directory
(1,485 entries) in about 0.1 s.

Set ``spark.python.daemon.module=sparkflow_daemon`` (``local_spark_session`` does) to use it. A zip
is left on the path unless the same version is importable from a directory, so a cluster whose
workers have no pip-installed pyspark behaves exactly as without this module.

Before Spark's daemon starts, it also imports, once, the modules every worker of a read imports
anyway (``PRELOAD``: the daemon's worker module, pyarrow, pandas, the Spark bridge of ``connector_base``,
confluent-kafka if installed), so the workers it forks find them in ``sys.modules``.
``SPARKFLOW_DAEMON_PRELOAD`` in the workers' environment changes that: ``0`` (or ``off``, ``none``,
empty) preloads nothing, a comma-separated list of module names preloads those, and one starting
with ``+`` preloads those as well (``+connectors.kafka`` on workers that only read Kafka). Forking a process
that runs threads or holds sockets is unsafe, so the daemon checks after each import that it still
has one thread and no socket; if a module started one, the daemon re-executes itself without
preloading (and says so on stderr). Modules that are not installed are skipped.
"""

from __future__ import annotations

import gc
import importlib
import os
import re
import runpy
import sys
import threading
import zipfile
from collections.abc import Iterable, Sequence

__all__ = ["PRELOAD", "PRELOAD_ENV", "drop_duplicate_zips", "preload", "preload_modules"]

PRELOAD_ENV = "SPARKFLOW_DAEMON_PRELOAD"
PRELOAD = ("pyarrow", "pandas", "pyspark.sql.datasource", "connector_base.spark.bridge", "confluent_kafka")
"""Preloaded by default after the daemon's worker module (``pyspark.worker`` when none is named)."""

_OFF = {"", "0", "off", "none", "false", "no"}
# Native threads that libraries start when they are loaded, switched off while the daemon preloads:
# OpenBLAS's pool (numpy, imported by pyarrow; Spark's workers run with OMP_NUM_THREADS = task cpus
# anyway) and the background purging thread of the jemalloc inside libarrow (Arrow allocates from
# mimalloc by default; jemalloc works the same without it, purging on allocation).
_NO_LOAD_TIME_THREADS = {"OMP_NUM_THREADS": "1", "JE_ARROW_MALLOC_CONF": "background_thread:false"}

_VERSION = re.compile(r"""__version__(?:\s*:\s*str)?\s*=\s*['"]([^'"]+)['"]""")
_PACKAGES = {"pyspark.zip": "pyspark", "py4j-": "py4j"}


def _version(text: str) -> str | None:
    match = _VERSION.search(text)
    return match.group(1) if match else None


def _zip_version(path: str, package: str) -> str | None:
    try:
        with zipfile.ZipFile(path) as archive:
            return _version(archive.read(f"{package}/version.py").decode("utf-8", "replace"))
    except (OSError, KeyError, zipfile.BadZipFile):
        return None


def _installed_version(package: str) -> str | None:
    for entry in sys.path:
        if entry.endswith(".zip"):
            continue
        candidate = os.path.join(entry or ".", package, "version.py")
        if os.path.isfile(candidate):
            with open(candidate, encoding="utf-8", errors="replace") as f:
                return _version(f.read())
    return None


def drop_duplicate_zips() -> list[str]:
    """Remove Spark's pyspark/py4j zips from ``sys.path`` where the same version is installed."""
    dropped = []
    for entry in list(sys.path):
        name = os.path.basename(entry)
        package = next((p for prefix, p in _PACKAGES.items() if name.startswith(prefix)), None)
        if package is None or not name.endswith(".zip"):
            continue
        version = _zip_version(entry, package)
        if version is not None and version == _installed_version(package):
            sys.path.remove(entry)
            sys.path_importer_cache.pop(entry, None)
            dropped.append(entry)
    return dropped


def preload_modules(worker_module: str | None, setting: str | None) -> list[str]:
    """The modules to preload: ``setting`` is the value of ``SPARKFLOW_DAEMON_PRELOAD`` (or None)."""
    defaults = [worker_module or "pyspark.worker", *PRELOAD]
    if setting is None:
        return list(dict.fromkeys(defaults))
    if setting.strip().lower() in _OFF:
        return []
    listed = [name.strip() for name in setting.strip().removeprefix("+").split(",") if name.strip()]
    return list(dict.fromkeys([*defaults, *listed])) if setting.strip().startswith("+") else listed


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _sockets() -> int:
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return 0
    count = 0
    for fd in fds:
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            continue
    return count


def preload(modules: Iterable[str]) -> tuple[list[str], str | None]:
    """Import ``modules``; stop at the first that leaves a new thread or socket behind.

    Returns the modules imported and the name of the one that started a thread or opened a socket
    (None if none did). Modules that are not installed, or fail to import, are skipped.
    """
    saved = {name: os.environ.get(name) for name in _NO_LOAD_TIME_THREADS}
    for name, value in _NO_LOAD_TIME_THREADS.items():
        os.environ.setdefault(name, value)
    threads, sockets = _threads(), _sockets()
    imported: list[str] = []
    try:
        for module in modules:
            try:
                importlib.import_module(module)
            except Exception as e:  # a broken optional module must not stop the daemon
                if not isinstance(e, ModuleNotFoundError):
                    print(f"sparkflow_daemon: not preloading {module}: {e!r}", file=sys.stderr)
                continue
            imported.append(module)
            if _threads() > threads or _sockets() > sockets:
                return imported, module
    finally:
        for name, previous in saved.items():
            if previous is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = previous
    return imported, None


def _preload_or_restart(argv: Sequence[str]) -> None:
    worker_module = argv[1] if len(argv) > 1 else None
    imported, unsafe = preload(preload_modules(worker_module, os.environ.get(PRELOAD_ENV)))
    if imported and unsafe is None:
        # the modules' objects live as long as the workers: the collection each reused worker runs
        # after a task neither traverses nor copies (copy-on-write) them
        gc.freeze()
    if unsafe is not None:
        print(
            f"sparkflow_daemon: importing {unsafe} started a thread or opened a socket, which is "
            f"unsafe before fork(); restarting without preloading ({PRELOAD_ENV}=0)",
            file=sys.stderr,
        )
        sys.stderr.flush()
        os.environ[PRELOAD_ENV] = "0"
        os.execv(sys.executable, sys.orig_argv)


if __name__ == "__main__":
    drop_duplicate_zips()
    _preload_or_restart(sys.argv)
    runpy.run_module("pyspark.daemon", run_name="__main__", alter_sys=True)
