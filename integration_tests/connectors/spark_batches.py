"""Micro-batches of a Spark streaming query as the event-time cut's tests look at them.

``collect_batches`` runs a query to the end of its data (``Trigger.AvailableNow``) and keeps every
row with the id of the micro-batch that read it; ``logged_offsets`` reads the source offsets Spark
wrote to the checkpoint's offset log (with the cut, version 2 offsets carry ``"cut"``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["collect_batches", "logged_offsets", "run_to_memory"]

T = TypeVar("T")
"""What the caller keeps of one row."""


def collect_batches(
    df: Any, checkpoint: Path, keep: Callable[[int, Any], T], timeout_s: float = 180.0
) -> list[T]:
    """``keep(batch id, row)`` for every row of streaming ``df``, run to its end into ``foreachBatch``."""
    kept: list[T] = []
    lock = threading.Lock()

    def collect(batch: Any, batch_id: int) -> None:
        rows = [keep(batch_id, r) for r in batch.collect()]
        with lock:  # foreachBatch runs on the query's thread, read here after it ends
            kept.extend(rows)

    _to_the_end(df.writeStream.foreachBatch(collect), checkpoint, timeout_s)
    with lock:
        return list(kept)


def logged_offsets(checkpoint: Path) -> dict[int, dict[str, Any]]:
    """Batch id -> the source offset Spark logged as that micro-batch's end (not the .crc files)."""
    out = {}
    for f in (checkpoint / "offsets").iterdir():
        if f.name.isdigit():
            out[int(f.name)] = json.loads(f.read_text().splitlines()[-1])
    return dict(sorted(out.items()))


def run_to_memory(
    df: Any, name: str, checkpoint: Path, output_mode: str = "append", timeout_s: float = 180.0
) -> tuple[int, int]:
    """Run streaming ``df`` to its end (``Trigger.AvailableNow``) into the memory table ``name``;
    returns the rows the source read and the rows Spark's stateful operators dropped as late
    (``numRowsDroppedByWatermark``), summed over the query's progress."""
    writer = df.writeStream.format("memory").queryName(name).outputMode(output_mode)
    progress = _to_the_end(writer, checkpoint, timeout_s)
    read = sum(p["numInputRows"] for p in progress)
    dropped = sum(op.get("numRowsDroppedByWatermark", 0) for p in progress for op in p["stateOperators"])
    return read, dropped


def _to_the_end(writer: Any, checkpoint: Path, timeout_s: float) -> list[Any]:
    """Start ``writer`` with ``Trigger.AvailableNow``, wait for its end (it must not fail); its progress."""
    query = writer.option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start()
    try:
        assert query.awaitTermination(timeout_s), "the AvailableNow query did not finish"
        assert query.exception() is None, query.exception()
        return list(query.recentProgress)
    finally:
        query.stop()
