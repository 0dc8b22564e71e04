"""``MachineWatch``: the low points of the machine while ``make test`` runs, for its closing summary.

A CI run keeps only the tail of ``make test``'s output, and a test that failed because the machine
ran short (a broker whose log directory hit a full disk exits, a JVM that cannot reserve its heap
exits, every time limit is missed at a load of 20) looks there like a bug of its own. The watch
samples, every few seconds, the free space of the file systems the tests write to (the temporary
directory: brokers' logs, checkpoints, the wheel matrix's venvs; the home directory: the Maven,
pip and uv caches), the memory available and the load average, and reports the lowest free space
and memory and the highest load, each with the time into the run when it was seen. ``psutil`` (a
dependency of ``sparkflow-testing``) reads the memory; the rest is the standard library.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

__all__ = ["MachineWatch"]

SAMPLE_S = 5.0
MB = 1 << 20


@dataclass
class _Low:
    """The extreme value seen of one measure and when, in seconds into the run."""

    value: float | None = None
    at_s: float = 0.0

    def see(self, value: float, at_s: float, lower: bool) -> None:
        if self.value is None or (value < self.value if lower else value > self.value):
            self.value, self.at_s = value, at_s


@dataclass
class MachineWatch:
    """Samples in a daemon thread from :meth:`start` until :meth:`stop`; :meth:`report` says what it saw."""

    paths: tuple[Path, ...] = field(default_factory=lambda: (Path(tempfile.gettempdir()), Path.home()))
    interval_s: float = SAMPLE_S
    _began: float = field(default_factory=time.monotonic)
    _disk: dict[str, _Low] = field(default_factory=dict)
    _memory: _Low = field(default_factory=_Low)
    _load: _Low = field(default_factory=_Low)
    _done: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> MachineWatch:
        """Begin sampling (the run's clock starts now)."""
        self._began = time.monotonic()
        self._thread = threading.Thread(target=self._watch, name="machine-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """End sampling, after one last sample."""
        self._done.set()
        if self._thread is not None:
            self._thread.join(self.interval_s + 1)
        self.sample()  # the end state too

    def _watch(self) -> None:
        while not self._done.wait(self.interval_s):
            self.sample()

    def sample(self) -> None:
        """Take one sample of every measure."""
        at = time.monotonic() - self._began
        devices: set[int] = set()
        for path in self.paths:
            try:
                device = os.stat(path).st_dev
                if device in devices:
                    continue  # the same file system under another name
                devices.add(device)
                free = shutil.disk_usage(path).free / MB
            except OSError:
                continue
            self._disk.setdefault(str(path), _Low()).see(free, at, lower=True)
        self._memory.see(psutil.virtual_memory().available / MB, at, lower=True)
        self._load.see(os.getloadavg()[0], at, lower=False)

    def report(self) -> str:
        """One line: the least free disk per file system, the least memory available, the top load."""
        parts = [
            f"disk free on {path} {low.value:,.0f} MB at {low.at_s:.0f}s"
            for path, low in self._disk.items()
            if low.value is not None
        ]
        if self._memory.value is not None:
            parts.append(f"memory available {self._memory.value:,.0f} MB at {self._memory.at_s:.0f}s")
        if self._load.value is not None:
            parts.append(f"load {self._load.value:.1f} at {self._load.at_s:.0f}s")
        return "machine low points: " + ("; ".join(parts) if parts else "not sampled")
