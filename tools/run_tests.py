"""``make test``: the whole suite as lanes of pytest runs, the lanes side by side.

A lane is a list of pytest runs made one after the other; the lanes run at the same time, each run
in its own pytest process with its own session fixtures (its own Spark session and brokers), so no
broker is shared across processes. The Kafka integration tests run twice, once per Kafka reader
(``SPARKFLOW_KAFKA_READER=native`` and ``=python``, and the sink's producing path likewise with
``SPARKFLOW_KAFKA_WRITER``), each pass in a lane of its own; the rest is split in two lanes (see
``LANES``). Much of a broker test's time is waiting (broker start-ups, triggers, timeouts), so the
lanes on two cores take far less than their sum.

A test that fails with Spark's own "Python worker failed to connect back" runs again, up to three times
(pytest-rerunfailures, ``RERUN``): Spark gives a new Python worker (a streaming source's runner, a
data source's planner) 10 s to connect back, a constant in its ``PythonWorkerFactory`` that no setting
changes, and on two loaded cores a worker's interpreter start can take longer. Any other failure fails
at once; pytest's summary names every re-run.

Every line a run prints is echoed with its run's name in front; the exit status is 0 only when every
run passed (pytest's 5, "no tests collected", counts as a failure).

Usage: ``python tools/run_tests.py [--serial] [pytest args...]``; ``--serial`` runs the lanes one
after the other (for a loaded machine or a debugging session).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

KAFKA_TESTS = "integration_tests/connectors/kafka"
PRAVEGA_TESTS = "integration_tests/connectors/pravega"
FORMATS_TESTS = "integration_tests/connectors/formats"
READER_ENV, WRITER_ENV = "SPARKFLOW_KAFKA_READER", "SPARKFLOW_KAFKA_WRITER"


@dataclass(frozen=True)
class Run:
    """One pytest process: its name in the output, its arguments and extra environment."""

    name: str
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


LANES: tuple[tuple[Run, ...], ...] = (
    (Run("kafka-native", (KAFKA_TESTS,), {READER_ENV: "native", WRITER_ENV: "native"}),),
    (Run("kafka-python", (KAFKA_TESTS,), {READER_ENV: "python", WRITER_ENV: "python"}),),
    (Run("pravega", ("unit_tests", PRAVEGA_TESTS, FORMATS_TESTS)),),
    (
        Run(
            "rest",
            (
                "integration_tests",
                f"--ignore={KAFKA_TESTS}",
                f"--ignore={PRAVEGA_TESTS}",
                f"--ignore={FORMATS_TESTS}",
            ),
        ),
    ),
)
"""Four lanes of about equal length: the Kafka tests once per reader and writer, the unit tests with
Pravega's and the format oracles, and every other integration test (files, Kinesis, the Spark cluster
and Connect, the wheel matrix)."""

RERUN = ("--reruns", "3", "--reruns-delay", "5", "--only-rerun", "Python worker failed to connect back")
"""Re-run only a test that Spark's worker start-up timeout failed (see the module docstring)."""

_print_lock = threading.Lock()


def _say(line: str) -> None:
    with _print_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def _run(run: Run, pytest_args: list[str]) -> int:
    cmd = [sys.executable, "-m", "pytest", *RERUN, *pytest_args, *run.args]
    began = time.monotonic()
    _say(f"[{run.name}] {' '.join(cmd)}\n")
    proc = subprocess.Popen(
        cmd,
        env={**os.environ, **run.env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        _say(f"[{run.name}] {line}")
    status = proc.wait()
    _say(f"[{run.name}] exited {status} after {time.monotonic() - began:.0f}s\n")
    return status


def _lane(runs: tuple[Run, ...], pytest_args: list[str], results: dict[str, int]) -> None:
    for run in runs:
        results[run.name] = _run(run, pytest_args)


def main(argv: list[str]) -> int:
    """Run every lane; 0 when every run passed."""
    serial = "--serial" in argv
    pytest_args = [a for a in argv if a != "--serial"]
    results: dict[str, int] = {}
    if serial:
        for runs in LANES:
            _lane(runs, pytest_args, results)
    else:
        threads = [threading.Thread(target=_lane, args=(runs, pytest_args, results)) for runs in LANES]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    summary = ", ".join(f"{name} exited {status}" for name, status in results.items())
    _say(f"make test: {summary}\n")
    return 0 if results and all(status == 0 for status in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
