"""Flags for the JVMs the tests start: brokers, registries, Spark drivers, daemons and executors.

A test JVM lives seconds to minutes on a small data set, with several others beside it on two cores,
so its start-up and CPU share matter more than peak throughput. ``-XX:TieredStopAtLevel=1`` keeps
HotSpot's first (client) compiler only: the optimising compiler's threads otherwise spend much of a
short JVM's CPU compiling code that runs for seconds. The serial collector uses no background
threads. Measured here on the Kafka failure and streaming modules (each Spark driver, the test's and
the killed ones, with or without these flags): 348 s of CPU and 268 s wall before, 233 s and 224 s
after. Users' Spark sessions are not touched: these go to the test processes only. ``make test``
(``tools/run_tests.py``) and ``make mutants`` set them for every run; a bare ``pytest`` does not (the
root conftest also serves the wheel matrix's venvs, which hold no ``sparkflow_testing``).
"""

from __future__ import annotations

import os
import shlex

__all__ = ["TEST_JVM_FLAGS", "use_test_jvm_flags_for_spark"]

TEST_JVM_FLAGS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")

PYSPARK_SUBMIT_ARGS = "PYSPARK_SUBMIT_ARGS"


def use_test_jvm_flags_for_spark() -> None:
    """Start every Spark driver of this process and its children (the killed drivers of the
    restart tests, Connect clients' local sessions) with ``TEST_JVM_FLAGS``.

    Through ``PYSPARK_SUBMIT_ARGS``, which PySpark passes to ``spark-submit`` when it starts the
    driver JVM and which child processes inherit; left alone when already set.
    """
    options = shlex.quote(" ".join(TEST_JVM_FLAGS))
    os.environ.setdefault(PYSPARK_SUBMIT_ARGS, f"--driver-java-options {options} pyspark-shell")
