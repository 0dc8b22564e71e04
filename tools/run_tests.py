"""``make test``: the whole suite as lanes of pytest runs, the lanes side by side.

A lane is a list of pytest runs made one after the other; the lanes run at the same time, each run
in its own pytest process with its own session fixtures (its own Spark session and brokers), so no
broker is shared across processes. The Kafka integration tests run twice, once per Kafka reader
(``SPARKFLOW_KAFKA_READER=native`` and ``=python``, and the sink's producing path likewise with
``SPARKFLOW_KAFKA_WRITER``), each pass in a lane of its own; the rest is split in two lanes (see
``LANES``). Much of a broker test's time is waiting (broker start-ups, triggers, timeouts), so the
lanes on two cores take far less than their sum. More processes do not help, measured twice: two
pytest-xdist workers per lane (eight processes, each with its Spark driver and brokers) kept the load
average at 25-33 on two cores and most Kafka tests failed on their own time limits; seven lanes of
one process (each Kafka pass in two runs, Pravega, the unit tests with the oracles and the wheel
matrix, the rest; started 15 s apart) ran at load 20-36, each half of a Kafka pass took 73-80 min
(a whole pass takes 65 in four lanes) and the Pravega run's Spark workers crashed under it. The four
lanes of one process each pass.

A test that fails with Spark's own "Python worker failed to connect back" runs again, up to three times
(pytest-rerunfailures, ``RERUN``): Spark gives a new Python worker (a streaming source's runner, a
data source's planner) 10 s to connect back, a constant in its ``PythonWorkerFactory`` that no setting
changes, and on two loaded cores a worker's interpreter start can take longer. So does one that fails
with "Python worker exited unexpectedly": seen only at load 20 and above (a fresh-clone run of seven
lanes, and three runs of a Pravega module beside it, which passed three times once the machine was
quiet), cause not found; a crash of the connector's own code repeats on every re-run and still fails.
Any other failure fails at once; pytest's summary names every re-run.

Every line a run prints is echoed with its run's name in front; the exit status is 0 only when every
run passed (pytest's 5, "no tests collected", counts as a failure). The output ends with a summary,
so that its tail (all a CI log may keep) says where the time went and what failed: each run's time
and result line, when ``--durations`` was asked for its slowest tests, then every failed test's line
from pytest's short summary (``FAILED``/``ERROR``, shortened), then the verdict.

Usage: ``python tools/run_tests.py [--serial] [pytest args...]``; ``--serial`` runs the lanes one
after the other (for a loaded machine or a debugging session).
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from sparkflow_testing.jvm import use_test_jvm_flags_for_spark
from sparkflow_testing.machine_watch import MachineWatch
from sparkflow_testing.processes import popen_guarded

KAFKA_TESTS = "integration_tests/connectors/kafka"
PRAVEGA_TESTS = "integration_tests/connectors/pravega"
FORMATS_TESTS = "integration_tests/connectors/formats"
WHEEL_TESTS = "integration_tests/test_wheel_install.py"
READER_ENV, WRITER_ENV = "SPARKFLOW_KAFKA_READER", "SPARKFLOW_KAFKA_WRITER"


@dataclass(frozen=True)
class Run:
    """One pytest process: its name in the output, its arguments and extra environment."""

    name: str
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)

    def command(self, pytest_args: list[str]) -> list[str]:
        """The pytest command line of this run."""
        return [sys.executable, "-m", "pytest", *RERUN, *pytest_args, *self.args]


LANES: tuple[tuple[Run, ...], ...] = (
    (Run("kafka-native", (KAFKA_TESTS,), {READER_ENV: "native", WRITER_ENV: "native"}),),
    (Run("kafka-python", (KAFKA_TESTS,), {READER_ENV: "python", WRITER_ENV: "python"}),),
    (Run("pravega", ("unit_tests", PRAVEGA_TESTS, FORMATS_TESTS, WHEEL_TESTS)),),
    (
        Run(
            "rest",
            (
                "integration_tests",
                f"--ignore={KAFKA_TESTS}",
                f"--ignore={PRAVEGA_TESTS}",
                f"--ignore={FORMATS_TESTS}",
                f"--ignore={WHEEL_TESTS}",
            ),
        ),
    ),
)
"""Four lanes of about equal length: the Kafka tests once per reader and writer (58 min each on a CI
machine), the unit tests with Pravega's, the format oracles and the wheel matrix (40 min + about 15),
and every other integration test (files, Kinesis, the Spark cluster and Connect: 66 min with the wheel
matrix, so it moved to the shorter lane)."""

RERUN = (
    "--reruns", "3", "--reruns-delay", "5",
    "--only-rerun", "Python worker failed to connect back",
    "--only-rerun", "Python worker exited unexpectedly",
)  # fmt: skip
"""Re-run only a test that Spark's worker start-up timeout or a worker lost under load failed (see the
module docstring)."""

SLOWEST_IN_SUMMARY = 4
"""How many of each run's slowest tests (pytest's ``--durations`` lines) the closing summary repeats."""

FAILURES_IN_SUMMARY, FAILURE_WIDTH = 12, 400
"""How many failed tests the closing summary names, and how much of each one's line it keeps."""

_DURATION = re.compile(r"^\d+\.\d+s (call|setup|teardown) ")
_FAILURE = re.compile(r"^(FAILED|ERROR) \S+")
_RESULT = re.compile(r"^=*\s*(\d+ (passed|failed|errors?|skipped|deselected)\b|no tests ran).* in [\d.]+s")

_print_lock = threading.Lock()


@dataclass
class Outcome:
    """What one run left for the closing summary."""

    status: int = 0
    seconds: float = 0.0
    result: str = ""
    slowest: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def read(self, line: str) -> None:
        """Keep a line of the run's output if it is one of its first ``--durations`` lines (the
        slowest), a failed test's short-summary line, or a result line (the last one wins: a test's
        own output may hold a nested run's)."""
        text = line.strip()
        if _FAILURE.match(text):
            self.failures.append(text if len(text) <= FAILURE_WIDTH else text[: FAILURE_WIDTH - 3] + "...")
        elif _DURATION.match(text):
            if len(self.slowest) < SLOWEST_IN_SUMMARY:
                self.slowest.append(text)
        elif _RESULT.match(text):
            self.result = text.strip("= ")


def _say(line: str) -> None:
    with _print_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def _run(run: Run, pytest_args: list[str]) -> Outcome:
    cmd = run.command(pytest_args)
    began = time.monotonic()
    _say(f"[{run.name}] {' '.join(cmd)}\n")
    # a run's pytest, with its Spark sessions and the brokers they started, dies with this process
    # however it ends (a CI step's timeout, a SIGKILL): nothing of a run outlives ``make test``
    proc = popen_guarded(cmd, env={**os.environ, **run.env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    outcome = Outcome()
    for line in io.TextIOWrapper(proc.stdout, errors="replace"):
        _say(f"[{run.name}] {line}")
        outcome.read(line)
    outcome.status = proc.wait()
    outcome.seconds = time.monotonic() - began
    _say(f"[{run.name}] exited {outcome.status} after {outcome.seconds:.0f}s\n")
    return outcome


def _lane(runs: tuple[Run, ...], pytest_args: list[str], results: dict[str, Outcome]) -> None:
    for run in runs:
        results[run.name] = _run(run, pytest_args)


def summary(results: dict[str, Outcome], machine: str = "") -> str:
    """The closing lines: each run's time, result and slowest tests, the machine's low points (least
    disk and memory free, top load: :mod:`sparkflow_testing.machine_watch`), the failed tests, then
    the one-line verdict (the failures last but one, where the shortest tail still holds them)."""
    lines = ["make test summary:"]
    for name, outcome in results.items():
        result = outcome.result or "no result line"
        lines.append(f"  {name}: exited {outcome.status} after {outcome.seconds:.0f}s, {result}")
        lines += [f"    {test}" for test in outcome.slowest]
    if machine:
        lines.append(machine)
    failures = [(name, line) for name, outcome in results.items() for line in outcome.failures]
    if failures:
        lines.append(f"failed tests ({len(failures)}):")
        lines += [f"  [{name}] {line}" for name, line in failures[:FAILURES_IN_SUMMARY]]
        if len(failures) > FAILURES_IN_SUMMARY:
            more = len(failures) - FAILURES_IN_SUMMARY
            lines.append(f"  ... and {more} more (each run's short summary above names them)")
    verdict = ", ".join(f"{name} exited {outcome.status}" for name, outcome in results.items())
    lines.append(f"make test: {verdict}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Run every lane; 0 when every run passed."""
    serial = "--serial" in argv
    use_test_jvm_flags_for_spark()  # every run's Spark drivers, the wheel matrix's too (inherited)
    pytest_args = [a for a in argv if a != "--serial"]
    results: dict[str, Outcome] = {}
    watch = MachineWatch().start()
    if serial:
        for runs in LANES:
            _lane(runs, pytest_args, results)
    else:
        threads = [threading.Thread(target=_lane, args=(runs, pytest_args, results)) for runs in LANES]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    watch.stop()
    _say(summary(results, watch.report()))
    return 0 if results and all(outcome.status == 0 for outcome in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
