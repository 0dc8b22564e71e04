"""What the network-fault tests of every connector share: the Parquet sink they stream into, waiting
for it, exactly-once checks, and a thread that resets connections while a read runs.

Each connector's module keeps its own broker and ``FaultProxy`` fixtures; these helpers know
nothing of a broker, only of a ``FaultProxy``, a query, and the sink's directory.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from connectors.testing.fault_proxy import FaultProxy

WORKER_START_FAILURE = "Python worker failed to connect back"
"""Spark's own start-up failure on an overloaded machine (the worker takes over 10 s to start)."""


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


def started(start: Callable[[], Any]) -> Any:
    """``start()`` a streaming query, again (same checkpoint) if its Python worker never started."""
    query = None
    for _attempt in range(3):
        query = start()
        while query.isActive and not query.recentProgress:
            time.sleep(0.2)
        error = query.exception()
        if error is None or WORKER_START_FAILURE not in str(error) or query.recentProgress:
            return query
    return query


def to_parquet(df: Any, out: Path, trigger: dict[str, Any]) -> Any:
    """Start streaming ``df`` into Parquet under ``out/data`` (checkpoint ``out/chk``)."""
    writer = (
        df.writeStream.format("parquet")
        .option("path", str(out / "data"))
        .option("checkpointLocation", str(out / "chk"))
        .trigger(**trigger)
    )
    return started(writer.start)


def terminated(query: Any, timeout_s: float) -> bool:
    """Whether ``query`` ended within ``timeout_s`` (``awaitTermination`` raises when it failed)."""
    try:
        return bool(query.awaitTermination(timeout_s))
    except Exception:  # StreamingQueryException: it ended, with the error the test looks at
        return True


def parquet_rows(spark: Any, out: Path, *, schema: str) -> list[Any]:
    """The committed rows of the sink (its metadata log names the files)."""
    rows: list[Any] = spark.read.schema(schema).parquet(str(out / "data")).collect()
    return rows


def wait_parquet(
    spark: Any, out: Path, count: int, query: Any, timeout_s: float, *, schema: str
) -> list[Any]:
    """The sink's rows once there are ``count``; fails at once if the query failed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert query.exception() is None, f"query failed: {query.exception()}"
        if (out / "data" / "_spark_metadata").exists():
            rows = parquet_rows(spark, out, schema=schema)
            if len(rows) >= count:
                return rows
        time.sleep(0.5)
    raise AssertionError(f"fewer than {count} rows after {timeout_s} s")


def assert_exactly(rows: list[Any], values: list[bytes], *, column: str) -> None:
    """Each of ``values`` once in ``column`` of ``rows``: none lost, none duplicated, nothing else."""
    got = [bytes(r[column]) for r in rows]
    assert len(got) == len(set(got)), f"{len(got) - len(set(got))} duplicated records"
    missing = set(values) - set(got)
    assert not missing, f"{len(missing)} records lost"
    assert len(got) == len(values)


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
