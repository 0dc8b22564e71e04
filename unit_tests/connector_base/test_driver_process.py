"""``connector_base.testing.driver_process``: a driver's whole group is killed, and dies with its starter.

The driver scripts here stand in for a Spark driver the way it matters: a Python process that starts
a long-lived child of its own (Spark's JVM) in the same process group.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from connector_base.testing.driver_process import DriverProcess

# Starts a child (the "JVM") that sleeps, writes both pids to argv[1], then prints DONE unless told
# to linger.
DRIVER = r"""
import json, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open(sys.argv[1] + ".tmp", "w") as f:
    json.dump({"child": child.pid}, f)
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
if sys.argv[2] == "linger":
    time.sleep(120)
child.kill()
print("DONE")
"""

# Starts a DriverProcess the way a test does, prints its pid, then sleeps until killed.
STARTER = r"""
import json, sys, time
from pathlib import Path
from connector_base.testing.driver_process import DriverProcess
driver = DriverProcess(Path(sys.argv[1]), [sys.argv[2], "linger"])
print(json.dumps({"driver": driver.proc.pid}), flush=True)
time.sleep(120)
"""


def _pids(pid_file: Path, proc: subprocess.Popen[bytes]) -> dict[str, int]:
    deadline = time.monotonic() + 30
    while not pid_file.exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the driver script did not start"
        time.sleep(0.05)
    return dict(json.loads(pid_file.read_text()))


def test_finish_sees_done_and_kill_takes_the_whole_group(tmp_path: Path) -> None:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    assert DriverProcess(script, [str(tmp_path / "done.json"), "finish"]).finish(60)

    lingering = DriverProcess(script, [str(tmp_path / "linger.json"), "linger"])
    child = psutil.Process(_pids(tmp_path / "linger.json", lingering.proc)["child"])
    lingering.kill()
    assert lingering.proc.returncode == -signal.SIGKILL
    _, alive = psutil.wait_procs([child], timeout=5)
    assert not alive, "the driver's child outlived the kill of its group"


def test_a_driver_dies_with_the_test_process_that_started_it_even_by_sigkill(tmp_path: Path) -> None:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    pid_file = tmp_path / "pids.json"
    starter = subprocess.Popen(
        [sys.executable, "-c", STARTER, str(script), str(pid_file)],
        stdout=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    assert starter.stdout is not None
    driver = int(json.loads(starter.stdout.readline() or '{"driver": -1}')["driver"])
    procs: list[psutil.Process] = []
    try:
        assert driver > 0, "the starter did not start its driver"
        procs = [psutil.Process(pid) for pid in (driver, _pids(pid_file, starter)["child"])]
        os.kill(starter.pid, signal.SIGKILL)  # no kill(), no finally in the starter: the process ends
        starter.wait(10)
        _, alive = psutil.wait_procs(procs, timeout=5)
        assert not alive, f"the driver's group outlived the test process: {alive}"
    finally:
        starter.kill()
        starter.wait(10)
        for proc in procs:  # psutil checks the pid still names that process
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
