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

``-c code args`` runs in this process too, as the interpreter would run it (``sys.argv`` of ``-c``
and the arguments, the empty string first on the path, a fresh ``__main__``), instead of starting a
second interpreter: Spark runs ``-c "import sys; print(...sys.version_info...)"`` once per Python
data source its lookup finds before a session's first ``load()`` (seven of them here, one after
another), and each cost two interpreter starts (measured: 40 ms against 10 ms for the plain
interpreter's one, on a busy machine 110-145 ms per probe).
"""

from __future__ import annotations

import os
import runpy
import sys

__all__ = ["main"]


def main() -> None:
    """Run ``-m module args`` with pyspark from site-packages and ``-c code args`` in this process;
    exec the interpreter for anything else."""
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "-c":
        _run_command(args[1], args[2:])
        return
    if len(args) < 2 or args[0] != "-m":
        os.execv(sys.executable, [sys.executable, *args])
    from sparkflow_daemon import drop_duplicate_zips

    _path_as_python_m()
    drop_duplicate_zips()
    module = args[1]
    sys.argv = [module, *args[2:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def _run_command(code: str, rest: list[str]) -> None:
    """``python -c code rest``, in this process."""
    import types

    _path_as_python_m(first="")  # reads the script's path from sys.argv[0]: before argv is replaced
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    sys.argv = ["-c", *rest]
    exec(compile(code, "<string>", "exec"), main.__dict__)


def _path_as_python_m(first: str | None = None) -> None:
    """``sys.path`` as ``python -m`` makes it: the working directory first (unless ``-P`` or
    ``PYTHONSAFEPATH``), where a script's run puts the script's own directory; ``first`` instead of
    the working directory (``python -c`` puts the empty string there)."""
    script_dir = os.path.dirname(os.path.abspath(sys.argv[0]))
    if sys.path and sys.path[0] == script_dir:
        del sys.path[0]
    if not sys.flags.safe_path:
        sys.path.insert(0, os.getcwd() if first is None else first)


if __name__ == "__main__":
    main()
