"""``sparkflow-python``: the interpreter Spark starts its Python processes with, pyspark compiled.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` first on the path of every Python process it
starts, and Python compiles modules imported from a zip from source each time. ``sparkflow_daemon``
avoids that for the workers that run tasks (``spark.python.daemon.module``), but the processes that
plan a Python data source (``create_data_source`` at ``load()``, ``plan_data_source_read`` at the
first action, the streaming source's runner) are started by ``PythonPlannerRunner`` under Spark's
default daemon, whatever that setting says: each compiles ``pyspark.sql`` again, about a second
on a quiet core (measured: importing both planning worker modules took 2.5-3.4 s from
site-packages and 7.4-8.2 s from the zip at load 8). That cost lands on a session's first query.

Pointed to by ``PYSPARK_PYTHON`` (``connector_base.spark.ensure_pyspark_python`` does so when this
script is installed), it runs ``-m module args`` in this process after removing Spark's zips from
``sys.path`` where the same pyspark and py4j versions are installed (the rule of
``sparkflow_daemon.drop_duplicate_zips``), with the path ``python -m`` would have (the working
directory first, not this script's directory, so a worker imports what the driver's working
directory holds as it does under the plain interpreter), and hands every other command line to the
interpreter unchanged (``os.execv``). A cluster whose Python has no pip-installed pyspark runs exactly as with
the plain interpreter.
"""

from __future__ import annotations

import os
import runpy
import sys

__all__ = ["main"]


def main() -> None:
    """Run ``-m module args`` with pyspark from site-packages; exec the interpreter for anything else."""
    args = sys.argv[1:]
    if len(args) < 2 or args[0] != "-m":
        os.execv(sys.executable, [sys.executable, *args])
    from sparkflow_daemon import drop_duplicate_zips

    _path_as_python_m()
    drop_duplicate_zips()
    module = args[1]
    sys.argv = [module, *args[2:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def _path_as_python_m() -> None:
    """``sys.path`` as ``python -m`` makes it: the working directory first (unless ``-P`` or
    ``PYTHONSAFEPATH``), where a script's run puts the script's own directory."""
    script_dir = os.path.dirname(os.path.abspath(sys.argv[0]))
    if sys.path and sys.path[0] == script_dir:
        del sys.path[0]
    if not sys.flags.safe_path:
        sys.path.insert(0, os.getcwd())


if __name__ == "__main__":
    main()
