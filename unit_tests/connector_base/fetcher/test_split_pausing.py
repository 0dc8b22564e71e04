"""Pausing splits for watermark alignment (FLIP-217) through SourceReaderBase and its fetchers."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest

from connector_base import ReaderFailedError, SourceReaderContext
from connector_base.errors import UnsupportedOperationError
from connector_base.split_reader import ALLOW_UNALIGNED_SOURCE_SPLITS_KEY
from unit_tests.connector_base.in_memory import (
    Collect,
    ListEmitter,
    ListReader,
    ListSplit,
    ListSplitReader,
    make_reader,
)


class PausableListSplitReader(ListSplitReader):
    def __init__(self, batch: int = 100) -> None:
        super().__init__(batch=batch)
        self.paused: dict[str, list] = {}

    def pause_or_resume_splits(
        self, splits_to_pause: Sequence[ListSplit], splits_to_resume: Sequence[ListSplit]
    ) -> None:
        for s in splits_to_pause:
            if s.split_id in self.splits:
                self.paused[s.split_id] = self.splits.pop(s.split_id)
        for s in splits_to_resume:
            if s.split_id in self.paused:
                self.splits[s.split_id] = self.paused.pop(s.split_id)


def _drain(reader: ListReader, out: Collect, until: float, expected: int | None = None) -> None:
    while time.monotonic() < until and (expected is None or len(out.items) < expected):
        reader.poll_next(out)
        time.sleep(0.001)


def test_a_split_reader_that_cannot_pause_fails_the_reader_naming_the_way_out() -> None:
    block = threading.Event()
    reader = make_reader(lambda: ListSplitReader(batch=1, block=block))
    try:
        reader.add_splits([ListSplit("a", tuple(range(10)))])
        reader.pause_or_resume_splits(["a"], [])
        deadline = time.monotonic() + 10
        with pytest.raises(ReaderFailedError) as failure:
            while time.monotonic() < deadline:
                reader.poll_next(Collect())
                time.sleep(0.005)
        assert isinstance(failure.value.__cause__, UnsupportedOperationError)
        assert "does not support pausing" in str(failure.value)
        assert ALLOW_UNALIGNED_SOURCE_SPLITS_KEY in str(failure.value.__cause__)
    finally:
        block.set()
        reader.close()


def test_allow_unaligned_source_splits_leaves_such_splits_unpaused() -> None:
    block = threading.Event()
    context = SourceReaderContext(config={ALLOW_UNALIGNED_SOURCE_SPLITS_KEY: "true"})
    split_reader = ListSplitReader(batch=3, block=block)
    reader = ListReader(lambda: split_reader, ListEmitter(), context)
    out = Collect()
    try:
        reader.add_splits([ListSplit("a", tuple(range(10)))])
        reader.pause_or_resume_splits(["a"], [])
        _drain(reader, out, time.monotonic() + 0.2)
        block.set()
        split_reader.wake_up()
        _drain(reader, out, time.monotonic() + 5, expected=10)
        assert out.items == list(range(10))
    finally:
        reader.close()


def test_a_paused_split_is_not_fetched_and_resumes_where_it_stopped() -> None:
    split_readers: list[PausableListSplitReader] = []

    def factory() -> PausableListSplitReader:
        split_readers.append(PausableListSplitReader(batch=20))
        return split_readers[-1]

    reader = make_reader(factory)
    out = Collect()
    try:
        reader.add_splits(
            [ListSplit("a", tuple(range(0, 5_000))), ListSplit("b", tuple(range(10_000, 10_100)))]
        )
        reader.poll_next(out)
        reader.pause_or_resume_splits(["a"], [])
        assert reader.paused_splits == {"a"}
        _drain(reader, out, time.monotonic() + 0.5)
        a_rows = [x for x in out.items if x < 10_000]
        assert [x for x in out.items if x >= 10_000] == list(range(10_000, 10_100))  # b went on
        assert len(a_rows) < 5_000  # a stopped (after what was already in flight)
        (split_reader,) = split_readers
        fetches = split_reader.fetches
        time.sleep(0.3)  # every split of the fetcher is paused (b is done): it does not fetch at all
        assert split_reader.fetches - fetches <= 1
        reader.pause_or_resume_splits([], ["a"])
        _drain(reader, out, time.monotonic() + 10, expected=5_100)
        assert [x for x in out.items if x < 10_000] == list(range(5_000))  # resumed, nothing lost or repeated
    finally:
        reader.close()
