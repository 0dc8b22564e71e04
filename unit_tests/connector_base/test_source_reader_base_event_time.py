"""SourceReaderBase and event time: one split-local output per split, created, fed and released."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from connector_base.event_time import ProgressiveTimestampsAndWatermarks, WatermarkStrategy
from connector_base.source_output import EventTimeReaderOutput
from unit_tests.connector_base.event_time.test_watermark_generators import RecordingOutput
from unit_tests.connector_base.in_memory import Collect, ListSplit, ListSplitReader, make_reader


class SplitOutput:
    def __init__(self, log: list[Any], split_id: str) -> None:
        self.log = log
        self.split_id = split_id

    def collect(self, record: Any, timestamp: int = 0) -> None:
        self.log.append(("record", self.split_id, record))

    def collect_batch(self, batch: Any, timestamps: Sequence[int] | None = None) -> None:
        for r in batch:
            self.collect(r)

    def emit_watermark(self, watermark: Any) -> None: ...

    def mark_idle(self) -> None: ...

    def mark_active(self) -> None: ...

    def set_caught_up(self, caught_up: bool) -> None:
        self.log.append(("caught_up", self.split_id, caught_up))

    def set_paused(self, paused: bool) -> None:
        self.log.append(("paused", self.split_id, paused))


class RecordingReaderOutput:
    def __init__(self) -> None:
        self.log: list[Any] = []

    def collect(self, record: Any) -> None:
        self.log.append(("record", None, record))

    def collect_batch(self, batch: Any) -> None:
        self.log.extend(("record", None, r) for r in batch)

    def create_output_for_split(self, split_id: str) -> SplitOutput:
        self.log.append(("create", split_id))
        return SplitOutput(self.log, split_id)

    def release_output_for_split(self, split_id: str) -> None:
        self.log.append(("release", split_id))


def _poll_until(reader: Any, output: Any, done: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        reader.poll_next(output)
        time.sleep(0.002)


def test_each_split_gets_its_own_output_from_creation_to_release() -> None:
    output = RecordingReaderOutput()
    assert isinstance(output, EventTimeReaderOutput)
    reader = make_reader(lambda: ListSplitReader(batch=2))
    try:
        reader.add_splits([ListSplit("a", (1, 2, 3)), ListSplit("b", (10,))])
        _poll_until(reader, output, lambda: ("release", "a") in output.log and ("release", "b") in output.log)
    finally:
        reader.close()
    log = output.log
    assert log[:2] == [("create", "a"), ("create", "b")]  # before any record: a new split holds the minimum
    records = [e for e in log if e[0] == "record"]
    assert [r for _, sid, r in records if sid == "a"] == [1, 2, 3]  # each record went to its split's output
    assert [r for _, sid, r in records if sid == "b"] == [10]
    assert len(records) == 4
    assert log.index(("release", "a")) > max(i for i, e in enumerate(log) if e[:2] == ("record", "a"))


def test_pauses_reach_the_split_output_and_plain_outputs_still_work() -> None:
    output = RecordingReaderOutput()
    plain = Collect()
    reader = make_reader(lambda: ListSplitReader(batch=1))
    try:
        reader.add_splits([ListSplit("a", tuple(range(3)))])
        reader.poll_next(output)  # the split's output exists from the first poll
        reader.pause_or_resume_splits(["a"], [])  # ListSplitReader cannot pause: only the fetcher fails
        assert ("paused", "a", True) in output.log
    finally:
        reader.close()
    reader = make_reader(lambda: ListSplitReader(batch=1))
    try:
        reader.add_splits([ListSplit("a", tuple(range(3)))])
        _poll_until(reader, plain, lambda: len(plain.items) == 3)
        assert plain.items == [0, 1, 2]
    finally:
        reader.close()


def test_the_reader_watermark_is_held_by_its_slowest_split() -> None:
    downstream = Collect()
    listener = RecordingOutput()
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda r, _ts: r)
    output: ProgressiveTimestampsAndWatermarks[int] = ProgressiveTimestampsAndWatermarks(
        strategy, downstream, listener
    )
    reader = make_reader(lambda: ListSplitReader(batch=2))
    deadline = time.monotonic() + 10
    try:
        reader.add_splits([ListSplit("slow", tuple(range(0, 100, 10))), ListSplit("fast", (500, 600, 700))])
        while len(downstream.items) < 13 and time.monotonic() < deadline:
            reader.poll_next(output)
            output.emit_periodic_watermark()
            time.sleep(0.002)
    finally:
        reader.close()
    assert sorted(downstream.items) == sorted([*range(0, 100, 10), 500, 600, 700])
    marks = [e for e in listener.events if isinstance(e, int)]
    assert marks and marks[0] < 100, listener.events  # "fast" alone would have said 499 or more
    assert marks == sorted(marks)
