"""Local Spark sessions for demos, tests and benchmarks, with ``PYSPARK_PYTHON`` set first."""

from __future__ import annotations

import os
import socket
import sys
import sysconfig
from typing import Any

__all__ = ["ensure_pyspark_python", "local_spark_session", "pyspark_python"]


def ensure_pyspark_python() -> None:
    """Point Spark's Python processes at this interpreter.

    Must happen before the session starts: the ``spark.pyspark.python`` setting alone does not
    reach the workers that plan and read Python data sources. Spark takes the interpreter of a data
    source registered with ``spark.dataSource.register`` from ``PYSPARK_PYTHON``, but that of one it
    finds itself (the ``pyspark_*`` modules this package installs: ``kafka-unified`` and the others)
    from ``PYSPARK_DRIVER_PYTHON`` first, so both are set; a ``PYSPARK_DRIVER_PYTHON`` set to anything
    but this interpreter is left alone. Where this package's ``sparkflow-python`` script is installed
    beside the interpreter, these processes start through it: the same interpreter, with pyspark
    imported compiled from site-packages rather than from Spark's zip, which the processes that plan
    a read would otherwise compile on every query's first use of them (see ``sparkflow_python``).
    """
    python = pyspark_python()
    os.environ["PYSPARK_PYTHON"] = python
    if os.environ.get("PYSPARK_DRIVER_PYTHON", sys.executable) in (sys.executable, python):
        os.environ["PYSPARK_DRIVER_PYTHON"] = python


def pyspark_python() -> str:
    """``sparkflow-python`` of this interpreter's scripts directory if installed, else the interpreter."""
    script = os.path.join(sysconfig.get_path("scripts"), "sparkflow-python")
    return script if os.access(script, os.X_OK) else sys.executable


def local_spark_session(app_name: str = "sparkflow", cores: int = 2, **conf: Any) -> Any:
    """A ``local[cores]`` SparkSession tuned for small machines (few shuffle partitions, no UI).

    Its Python workers start from ``sparkflow_daemon`` (see that module: pyspark compiled, and the
    read's modules preloaded before fork, about a second less per new worker);
    ``spark__python__daemon__module="pyspark.daemon"`` restores Spark's own.
    """
    ensure_pyspark_python()
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(cores * 2))
        .config("spark.driver.memory", "2g")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.python.worker.reuse", "true")
        # workers import pyspark compiled from site-packages, not from source out of pyspark.zip
        .config("spark.python.daemon.module", "sparkflow_daemon")
    )
    if hasattr(socket, "AF_UNIX"):
        # the JVM talks to its Python workers over Unix domain sockets, not loopback TCP, where each
        # Python task waited ~40 ms on a delayed acknowledgement (spark-setup.md, "Python workers")
        builder = builder.config("spark.python.unix.domain.socket.enabled", "true")
    for key, value in conf.items():
        builder = builder.config(key.replace("__", "."), str(value))
    return builder.getOrCreate()
