"""``tools/run_tests.py``: the closing summary keeps each run's time, result line, slowest tests and
failed tests."""

from __future__ import annotations

import importlib.util
import shutil
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture(scope="module")
def run_tests() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "tools" / "run_tests.py"
    spec = importlib.util.spec_from_file_location("run_tests", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_tests"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


PYTEST_OUTPUT = """\
....F.
============================= slowest 25 durations =============================
239.32s call     integration_tests/test_wheel_install.py::test_wheel_on_every_python[3.12]
228.71s call     integration_tests/test_wheel_install.py::test_wheel_on_every_python[3.13]
114.57s call     integration_tests/connector_base/test_driver_kill_restart.py::test_killed
87.47s call     integration_tests/test_wheel_install.py::test_wheel_on_every_python[3.11]
69.62s call     integration_tests/cluster/test_spark_connect.py::test_kafka_unified_over_connect
63.14s call     integration_tests/connectors/kinesis/test_kinesis_driver_kill.py::test_killed[moto]
51.89s setup    integration_tests/cluster/test_cluster_connectors.py::test_kafka_batch_read
E   AssertionError: unit tests on Python 3.12:
E     1 failed, 803 passed, 19 skipped, 1 warning in 112.99s (0:01:52)
=========================== short test summary info ============================
SKIPPED [1] integration_tests/connectors/kinesis/test_kinesis_reads.py:182: moto: a stand-in's gap
FAILED integration_tests/test_wheel_install.py::test_wheel_on_every_python[3.12] - AssertionError: {long}
ERROR integration_tests/cluster/test_spark_connect.py::test_kafka_unified_over_connect - TimeoutError
2 failed, 174 passed, 6 skipped in 4134.66s (1:08:54)
""".format(long="unit tests on Python 3.12: 1 failed, 803 passed " * 10)
WHEEL = "integration_tests/test_wheel_install.py::test_wheel_on_every_python[3.12]"
CONNECT = "integration_tests/cluster/test_spark_connect.py::test_kafka_unified_over_connect"


def test_the_summary_names_each_runs_time_result_and_slowest_tests(run_tests: ModuleType) -> None:
    rest = run_tests.Outcome()
    for line in PYTEST_OUTPUT.splitlines(keepends=True):
        rest.read(line)
    rest.status, rest.seconds = 1, 4138.2
    quiet = run_tests.Outcome(status=0, seconds=12.0)
    quiet.read("===== 3 passed in 11.50s =====\n")
    machine = "machine low points: disk free on /tmp 412 MB at 1900s"
    text = run_tests.summary({"rest": rest, "pravega": quiet}, machine)
    lines = text.splitlines()
    # the run's own result line, not the nested run's that a failure message quoted
    assert lines[1] == "  rest: exited 1 after 4138s, 2 failed, 174 passed, 6 skipped in 4134.66s (1:08:54)"
    assert lines[2:6] == [f"    {line}" for line in PYTEST_OUTPUT.splitlines()[2:6]]
    assert lines[6] == "  pravega: exited 0 after 12s, 3 passed in 11.50s"
    assert lines[7] == machine
    assert lines[8] == "failed tests (2):"
    wheel, connect = lines[9:11]
    assert wheel.startswith(f"  [rest] FAILED {WHEEL} - AssertionError: unit tests on Python 3.12")
    assert wheel.endswith("...") and len(wheel) == len("  [rest] ") + run_tests.FAILURE_WIDTH
    assert connect == f"  [rest] ERROR {CONNECT} - TimeoutError"
    assert lines[-1] == "make test: rest exited 1, pravega exited 0"


def test_a_runs_command_puts_its_own_paths_after_the_shared_arguments(run_tests: ModuleType) -> None:
    command = run_tests.Run("kafka", ("integration_tests/connectors/kafka",)).command(["-q"])
    assert command[1:3] == ["-m", "pytest"] and "--only-rerun" in command
    assert command[-2:] == ["-q", "integration_tests/connectors/kafka"]


def test_the_machine_watch_reports_its_low_points(tmp_path: Path) -> None:
    from sparkflow_testing.machine_watch import MachineWatch

    watch = MachineWatch(paths=(tmp_path, tmp_path / "gone"), interval_s=0.05).start()
    time.sleep(0.3)
    watch.stop()
    report = watch.report()
    free_mb = shutil.disk_usage(tmp_path).free / (1 << 20)
    assert report.startswith(f"machine low points: disk free on {tmp_path} ")
    assert "gone" not in report  # a path that does not exist is left out, not a failure
    seen = float(report.split(f"disk free on {tmp_path} ")[1].split(" MB")[0].replace(",", ""))
    assert abs(seen - free_mb) < max(1024, free_mb * 0.05)  # the file system's own figure, not a constant
    assert "memory available" in report and "load" in report
