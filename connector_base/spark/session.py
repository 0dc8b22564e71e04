"""Local Spark sessions for demos, tests and benchmarks, with ``PYSPARK_PYTHON`` set first."""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["local_spark_session", "ensure_pyspark_python"]


def ensure_pyspark_python() -> None:
    """Point Spark's Python workers at this interpreter.

    Must happen before the session starts: the ``spark.pyspark.python`` setting alone does not
    reach the workers that plan and read Python data sources.
    """
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


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
    for key, value in conf.items():
        builder = builder.config(key.replace("__", "."), str(value))
    return builder.getOrCreate()
