"""``SequenceSplitReader``: generates up to ``batch`` records per split per fetch."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from typing_extensions import override

from connector_base import RecordsBySplits, SplitReader, SplitsAddition, SplitsChange
from connectors.sequence.split import UNBOUNDED, SequenceSplit

FETCH_BATCH = 8192
FETCH_BATCH_CONFIG = "sequence.reader.fetch.rows"
"""Reader configuration key: the most rows a fetch generates per split (default ``FETCH_BATCH``)."""


def available_rows(rows_per_second: int, start_epoch_s: float, now_s: float) -> int:
    """How many rows a continuous partition holds at ``now_s``."""
    return max(0, int((now_s - start_epoch_s) * rows_per_second))


class SequenceSplitReader(SplitReader[tuple[int, int, str], SequenceSplit]):
    """Reads the assigned partitions; a bounded split finishes at its end.

    An unbounded split (local runtime, continuous) waits for rows that appear with time. Paused
    splits (watermark alignment) are skipped until resumed; every fetch reports which splits have
    read all the rows that exist now (caught up), so event-time idleness can apply.
    """

    def __init__(
        self, rows_per_second: int = 1000, start_epoch_s: float = 0.0, batch: int = FETCH_BATCH
    ) -> None:
        self._batch = batch
        self._splits: dict[str, list[int]] = {}  # id -> [partition, next, end]
        self._paused: set[str] = set()
        self._rows_per_second = rows_per_second
        self._start_epoch_s = start_epoch_s
        self._wake = threading.Event()

    @override
    def fetch(self) -> RecordsBySplits[tuple[int, int, str]]:
        import time

        out: RecordsBySplits[tuple[int, int, str]] = RecordsBySplits()
        produced = False
        for sid, state in list(self._splits.items()):
            if sid in self._paused:
                continue
            partition, nxt, end = state
            limit = (
                end
                if end != UNBOUNDED
                else available_rows(self._rows_per_second, self._start_epoch_s, time.time())
            )
            upto = min(limit, nxt + self._batch)
            if upto > nxt:
                out.add_all(sid, [(partition, i, f"{partition}-{i}") for i in range(nxt, upto)])
                state[1] = upto
                produced = True
            if end != UNBOUNDED and state[1] >= end:
                out.add_finished_split(sid)
                del self._splits[sid]
            else:
                out.set_caught_up(sid, state[1] >= limit)
        if not produced and not out.finished_splits():
            self._wake.wait(0.05)
            self._wake.clear()
        return out

    @override
    def handle_splits_changes(self, change: SplitsChange[SequenceSplit]) -> None:
        for s in change.splits:
            if isinstance(change, SplitsAddition):
                self._splits[s.split_id] = [s.partition, s.start, s.end]
            else:
                self._splits.pop(s.split_id, None)
                self._paused.discard(s.split_id)

    @override
    def pause_or_resume_splits(
        self, splits_to_pause: Sequence[SequenceSplit], splits_to_resume: Sequence[SequenceSplit]
    ) -> None:
        self._paused.update(s.split_id for s in splits_to_pause if s.split_id in self._splits)
        self._paused.difference_update(s.split_id for s in splits_to_resume)

    @override
    def wake_up(self) -> None:
        self._wake.set()

    @override
    def close(self) -> None:
        self._splits.clear()
