"""Benchmark (a): ``SourceReaderBase`` over an in-memory ``SplitReader`` versus a plain loop over it.

Both sides run the same split reader (same records, same fetch sizes) and put every record into the
same kind of output; the base adds the fetcher thread, the bounded queue and the emitter. The two
take turns (``--repeats`` rounds each). Prints records/s of both and the overhead, by wall time and
by the process's CPU time (all threads; steadier on a shared machine). Target: at most 10% overhead.

    python -m benchmarks.reader_base_overhead [--records N] [--per-fetch K]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass

from connector_base import (
    BatchEmitter,
    InputStatus,
    RecordsBySplits,
    SingleThreadMultiplexSourceReaderBase,
    SourceReaderContext,
    SourceSplit,
    SplitReader,
    SplitsAddition,
    SplitsChange,
)


@dataclass(frozen=True, slots=True)
class MemSplit(SourceSplit):
    name: str
    count: int

    @property
    def split_id(self) -> str:
        return self.name


class MemSplitReader(SplitReader[tuple[int, bytes], MemSplit]):
    """Hands out pre-built record lists (the data is in memory: the machinery is what is measured)."""

    def __init__(self, per_fetch: int) -> None:
        self.per_fetch = per_fetch
        self.splits: dict[str, list[int]] = {}
        self.payload = b"x" * 100

    def fetch(self) -> RecordsBySplits[tuple[int, bytes]]:
        out: RecordsBySplits[tuple[int, bytes]] = RecordsBySplits()
        p = self.payload
        for sid, st in list(self.splits.items()):
            pos, end = st
            upto = min(end, pos + self.per_fetch)
            out.add_all(sid, [(i, p) for i in range(pos, upto)])
            st[0] = upto
            if upto >= end:
                out.add_finished_split(sid)
                del self.splits[sid]
        return out

    def handle_splits_changes(self, change: SplitsChange[MemSplit]) -> None:
        if isinstance(change, SplitsAddition):
            for s in change.splits:
                self.splits[s.split_id] = [0, s.count]

    def wake_up(self) -> None:
        pass

    def close(self) -> None:
        pass


class Sink:
    __slots__ = ("rows",)

    def __init__(self) -> None:
        self.rows: list[tuple[int, bytes]] = []

    def collect(self, r: tuple[int, bytes]) -> None:
        self.rows.append(r)

    def collect_batch(self, b: list[tuple[int, bytes]]) -> None:
        self.rows.extend(b)


class State:
    __slots__ = ("pos",)

    def __init__(self) -> None:
        self.pos = 0


class Emitter(BatchEmitter[tuple[int, bytes], tuple[int, bytes], State]):
    def emit_record(self, element, output, split_state) -> None:  # type: ignore[no-untyped-def]
        output.collect(element)
        split_state.pos = element[0] + 1

    def emit_records(self, elements, output, split_state) -> None:  # type: ignore[no-untyped-def]
        output.collect_batch(elements)
        if elements:
            split_state.pos = elements[-1][0] + 1


class Reader(SingleThreadMultiplexSourceReaderBase[tuple[int, bytes], tuple[int, bytes], MemSplit, State]):
    def _initialized_state(self, split: MemSplit) -> State:
        return State()

    def _to_split_type(self, split_id: str, state: State) -> MemSplit:
        raise NotImplementedError


def plain_loop(splits: list[MemSplit], per_fetch: int) -> int:
    reader = MemSplitReader(per_fetch)
    reader.handle_splits_changes(SplitsAddition(splits))
    sink = Sink()
    states = {s.split_id: State() for s in splits}
    while states:
        records = reader.fetch()
        while (sid := records.next_split()) is not None:
            elements = records.records_of_current_split()
            sink.collect_batch(elements)
            states[sid].pos = elements[-1][0] + 1
        for sid in records.finished_splits():
            states.pop(sid, None)
    return len(sink.rows)


def reader_base(splits: list[MemSplit], per_fetch: int) -> int:
    reader = Reader(lambda: MemSplitReader(per_fetch), Emitter(), SourceReaderContext())
    sink = Sink()
    reader.add_splits(splits)
    reader.notify_no_more_splits()
    while True:
        status = reader.poll_next(sink)
        if status is InputStatus.END_OF_INPUT:
            break
        if status is InputStatus.NOTHING_AVAILABLE:
            reader.is_available().result(timeout=5)
    reader.close()
    return len(sink.rows)


def measure(fn, splits: list[MemSplit], per_fetch: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Records per second of wall time and of this process's CPU time (every thread)."""
    total = sum(s.count for s in splits)
    t0, c0 = time.perf_counter(), time.process_time()
    n = fn(splits, per_fetch)
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    assert n == total, (n, total)
    return total / dt, total / dc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=4_000_000)
    ap.add_argument("--splits", type=int, default=4)
    ap.add_argument("--per-fetch", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    splits = [MemSplit(f"s{i}", args.records // args.splits) for i in range(args.splits)]
    measure(plain_loop, splits, args.per_fetch)  # warm-up
    # the two sides take turns, so a change of the machine's load falls on both
    plain, base = [], []
    for _ in range(args.repeats):
        plain.append(measure(plain_loop, splits, args.per_fetch))
        base.append(measure(reader_base, splits, args.per_fetch))
    for what, i in (("wall", 0), ("CPU", 1)):
        p = statistics.median(r[i] for r in plain)
        b = statistics.median(r[i] for r in base)
        print(
            f"(a) reader base, by {what} time: plain loop {p:,.0f} rec/s, SourceReaderBase {b:,.0f} rec/s, "
            f"ratio {b / p:.3f}x, overhead {(p / b - 1) * 100:.1f}% (target <= 10%)"
        )
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
