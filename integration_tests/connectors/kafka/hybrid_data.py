"""Data for the hybrid source tests: history in Parquet files, the rest (with an overlap) in Kafka.

Record ``i`` has value ``r<i>`` and event time ``BASE_MS + i`` seconds; the files hold ``0 .. n-1``,
the topic holds ``first .. last-1`` with the event time as the record timestamp (CreateTime).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

BASE_MS = (int(time.time()) - 3600) * 1000
"""An hour ago, so no retention deletes the records."""


def event_ms(i: int) -> int:
    """The event time of record ``i``."""
    return BASE_MS + i * 1000


def write_history(directory: Path, n: int, files: int = 3) -> str:
    """Records ``0 .. n-1`` in ``files`` Parquet files (``key``, ``value``, ``timestamp``)."""
    directory.mkdir(parents=True, exist_ok=True)
    per = -(-n // files)
    for f in range(files):
        idx = range(f * per, min(n, (f + 1) * per))
        table = pa.table(
            {
                "key": pa.array([f"k{i}".encode() for i in idx], pa.binary()),
                "value": pa.array([f"r{i}".encode() for i in idx], pa.binary()),
                "timestamp": pa.array([event_ms(i) for i in idx], pa.timestamp("ms", tz="UTC")),
            }
        )
        pq.write_table(table, directory / f"part-{f}.parquet")
    return str(directory)


def fill_topic(broker: Any, first: int, last: int, partitions: int = 2) -> str:
    """A new topic holding records ``first .. last-1`` in event-time order per partition."""
    topic: str = broker.create_topic(partitions, **{"retention.ms": "-1"})
    broker.produce(
        topic,
        [f"r{i}".encode() for i in range(first, last)],
        keys=[f"k{i}".encode() for i in range(first, last)],
        timestamps=[event_ms(i) for i in range(first, last)],
    )
    return topic


def hybrid_options(history: str, bootstrap: str, topic: str, **extra: str) -> dict[str, str]:
    """``format("hybrid")`` options: the files, then the topic from the files' maximum event time."""
    return {
        "sources": "files-unified,kafka-unified",
        "files-unified.path": history,
        "files-unified.format": "parquet",
        "kafka-unified.kafka.bootstrap.servers": bootstrap,
        "kafka-unified.subscribe": topic,
        "hybrid.eventTimeColumn": "timestamp",
        **extra,
    }
