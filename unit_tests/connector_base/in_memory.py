"""An in-memory split reader for tests of the reader machinery."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from connector_base import (
    BatchEmitter,
    RecordsBySplits,
    SingleThreadMultiplexSourceReaderBase,
    SourceReaderContext,
    SourceSplit,
    SplitReader,
    SplitsAddition,
    SplitsChange,
)


@dataclass(frozen=True, slots=True)
class ListSplit(SourceSplit):
    name: str
    records: tuple[int, ...]
    start: int = 0

    @property
    def split_id(self) -> str:
        return self.name


class ListSplitReader(SplitReader[int, ListSplit]):
    def __init__(
        self, batch: int = 100, fail_after: int | None = None, block: threading.Event | None = None
    ) -> None:
        self.splits: dict[str, list] = {}
        self.batch = batch
        self.fail_after = fail_after
        self.fetches = 0
        self.block = block
        self.woken = threading.Event()
        self.closed = False

    def fetch(self) -> RecordsBySplits[int]:
        self.fetches += 1
        if self.fail_after is not None and self.fetches > self.fail_after:
            raise OSError("disk on fire")
        if self.block is not None and not self.block.is_set():
            self.woken.wait(5)
            self.woken.clear()
            return RecordsBySplits()
        out: RecordsBySplits[int] = RecordsBySplits()
        for sid, st in list(self.splits.items()):
            split, pos = st
            chunk = split.records[pos : pos + self.batch]
            out.add_all(sid, list(chunk))
            st[1] = pos + len(chunk)
            if st[1] >= len(split.records):
                out.add_finished_split(sid)
                del self.splits[sid]
        return out

    def handle_splits_changes(self, change: SplitsChange[ListSplit]) -> None:
        if isinstance(change, SplitsAddition):
            for s in change.splits:
                self.splits[s.split_id] = [s, s.start]
        else:
            for s in change.splits:
                self.splits.pop(s.split_id, None)

    def wake_up(self) -> None:
        self.woken.set()

    def close(self) -> None:
        self.closed = True


class ListState:
    __slots__ = ("split", "pos")

    def __init__(self, split: ListSplit) -> None:
        self.split = split
        self.pos = split.start


class ListEmitter(BatchEmitter[int, int, ListState]):
    def emit_record(self, element, output, split_state) -> None:
        output.collect(element)
        split_state.pos += 1


class ListReader(SingleThreadMultiplexSourceReaderBase[int, int, ListSplit, ListState]):
    def _initialized_state(self, split: ListSplit) -> ListState:
        return ListState(split)

    def _to_split_type(self, split_id: str, state: ListState) -> ListSplit:
        return ListSplit(state.split.name, state.split.records, state.pos)


class Collect:
    def __init__(self) -> None:
        self.items: list = []

    def collect(self, r) -> None:
        self.items.append(r)

    def collect_batch(self, b) -> None:
        self.items.extend(b)


def make_reader(factory, fetchers: int = 1, capacity: int = 2) -> ListReader:
    ctx = SourceReaderContext(
        config={"source.reader.fetchers": fetchers, "source.reader.element.queue.capacity": capacity}
    )
    return ListReader(factory, ListEmitter(), ctx)
