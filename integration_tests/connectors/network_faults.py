"""What the network-fault tests of every connector share: proxies made healthy around a test, and a
thread that resets connections while a read runs (a ``FaultProxy`` is all they know of a broker).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from sparkflow_testing.network.fault_proxy import FaultProxy


@contextmanager
def healthy(proxies: Iterable[FaultProxy]) -> Iterator[None]:
    """Every proxy forwarding with no latency before and after the block (a test's faults end with it)."""
    chosen = list(proxies)

    def restore() -> None:
        for proxy in chosen:
            proxy.restore()
            proxy.set_latency(0)

    restore()
    try:
        yield
    finally:
        restore()


class ResetsWhileReading:
    """Resets every connection of ``proxy`` each time ``every_bytes`` more came down it, ``times`` times.

    Use as a context manager around a read; ``left`` is how many resets did not happen (0 proves
    each landed inside the read). Threading: one daemon thread, polling the proxy's counters.
    """

    def __init__(self, proxy: FaultProxy, times: int, every_bytes: int, poll_s: float = 0.02) -> None:
        self.proxy, self.left, self.every, self.poll_s = proxy, times, every_bytes, poll_s
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        mark = self.proxy.stats().bytes_down
        while self.left and not self.done.wait(self.poll_s):
            if self.proxy.stats().bytes_down - mark >= self.every and self.proxy.reset_all():
                self.left -= 1
                mark = self.proxy.stats().bytes_down

    def __enter__(self) -> ResetsWhileReading:
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()
