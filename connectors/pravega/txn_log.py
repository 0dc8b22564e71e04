"""``TransactionLog``: which Pravega transactions a streaming sink's micro-batch commits.

Spark records a micro-batch as committed only after the sink's ``commit(messages, batchId)``
returns. A driver that dies in between re-runs the batch on restart, and its tasks write the same
events into new transactions. Before committing anything, the sink's driver side therefore writes
the batch's transaction ids here (one small JSON file per batch, replaced atomically). A re-run
batch finds its record and, task by task (a replayed batch has the same partitions), keeps the
recorded transaction when it committed or can still be committed and aborts the new one; only where
the recorded one was aborted (its lease ran out before the restart) does the new one take its place,
and the record is updated before that commit. So every task's events are committed exactly once,
however often the driver dies.

The log lives in a local directory: ``<checkpointLocation>/sinks/pravega`` or the sink option
``transaction_log_dir``.

Threading: used by the one driver-side commit at a time Spark runs per query.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from connector_base import ConnectorError

__all__ = ["TransactionLog", "KEEP_BATCHES", "local_directory"]

VERSION = 1
KEEP_BATCHES = 100
"""Records of this many recent batches are kept (Spark re-runs at most the last one)."""


def local_directory(location: str, option: str) -> Path:
    """A local path from ``location`` (a plain path or ``file:`` URI); other schemes are rejected."""
    if location.startswith("file://"):
        location = location[len("file://") :]
    elif location.startswith("file:"):
        location = location[len("file:") :]
    elif "://" in location or ":" in location.split("/")[0]:  # a scheme (hdfs:, s3a:, ...)
        raise ConnectorError(
            f"option {option}={location!r}: the exactly-once Pravega sink keeps its transaction log in a "
            "local directory; give a local path (or set transaction_log_dir to one)"
        )
    return Path(location)


class TransactionLog:
    """Per-batch transaction ids in ``directory`` (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, batch_id: int) -> Path:
        return self.directory / f"{batch_id}.json"

    def get(self, batch_id: int) -> list[int | None] | None:
        """The recorded transactions of ``batch_id`` in partition order (``None``: no transaction)."""
        try:
            raw = json.loads(self._path(batch_id).read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise ConnectorError(f"transaction log {self._path(batch_id)} is unreadable: {e}") from e
        if raw.get("version") != VERSION or raw.get("batch") != batch_id:
            raise ConnectorError(
                f"transaction log {self._path(batch_id)}: expected version {VERSION} for batch {batch_id}, "
                f"found {raw.get('version')!r} for batch {raw.get('batch')!r}"
            )
        return [None if t is None else int(t, 16) for t in raw["transactions"]]

    def put(self, batch_id: int, txn_ids: list[int | None]) -> None:
        """Record (or replace) the transactions of ``batch_id``, durably, before any is committed."""
        self.directory.mkdir(parents=True, exist_ok=True)
        body = {
            "version": VERSION,
            "batch": batch_id,
            "transactions": [None if t is None else f"{t:032x}" for t in txn_ids],
        }
        path = self._path(batch_id)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w") as f:
            json.dump(body, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def prune(self, batch_id: int) -> None:
        """Forget batches older than the last ``KEEP_BATCHES`` up to ``batch_id``."""
        for p in self.directory.glob("*.json"):
            if p.stem.isdigit() and int(p.stem) <= batch_id - KEEP_BATCHES:
                p.unlink(missing_ok=True)
