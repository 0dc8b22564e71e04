from __future__ import annotations

import threading
import time

import pytest

from connector_base import InputStatus, ReaderFailedError

from .in_memory import Collect, ListSplit, ListSplitReader, make_reader


def drain(reader, out, timeout=10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = reader.poll_next(out)
        if status is InputStatus.END_OF_INPUT:
            return
        if status is InputStatus.NOTHING_AVAILABLE:
            try:
                reader.is_available().result(timeout=0.5)
            except TimeoutError:
                pass
    raise AssertionError("reader did not finish")


@pytest.mark.parametrize("fetchers", [1, 3])
def test_reads_every_split_exactly_once_in_order_per_split(fetchers: int) -> None:
    splits = [ListSplit(f"s{i}", tuple(range(i * 1000, i * 1000 + 777))) for i in range(5)]
    reader = make_reader(lambda: ListSplitReader(batch=50), fetchers=fetchers)
    out = Collect()
    reader.start()
    reader.add_splits(splits)
    reader.notify_no_more_splits()
    drain(reader, out)
    reader.close()
    assert sorted(out.items) == sorted(r for s in splits for r in s.records)
    for s in splits:
        mine = [r for r in out.items if s.records[0] <= r <= s.records[-1]]
        assert mine == list(s.records)


def test_multi_thread_manager_uses_several_fetchers() -> None:
    reader = make_reader(lambda: ListSplitReader(batch=10), fetchers=3)
    reader.add_splits([ListSplit(f"s{i}", tuple(range(100))) for i in range(6)])
    assert reader._fetcher_manager.fetcher_count == 3
    reader.notify_no_more_splits()
    drain(reader, Collect())
    reader.close()


def test_snapshot_positions_resume_without_loss_or_duplicates() -> None:
    split = ListSplit("a", tuple(range(1000)))
    reader = make_reader(lambda: ListSplitReader(batch=7), capacity=1)
    out = Collect()
    reader.add_splits([split])
    while len(out.items) < 300:
        if reader.poll_next(out) is InputStatus.NOTHING_AVAILABLE:
            reader.is_available().result(timeout=5)
    (snap,) = reader.snapshot_state(1)
    assert snap.start == len(out.items)
    reader.close()
    resumed = make_reader(lambda: ListSplitReader(batch=7))
    out2 = Collect()
    resumed.add_splits([snap])
    resumed.notify_no_more_splits()
    drain(resumed, out2)
    resumed.close()
    assert out.items + out2.items == list(range(1000))


def test_fetcher_error_surfaces_on_calling_thread_with_cause() -> None:
    reader = make_reader(lambda: ListSplitReader(batch=1, fail_after=3))
    reader.add_splits([ListSplit("a", tuple(range(100)))])
    with pytest.raises(ReaderFailedError) as info:
        drain(reader, Collect())
    assert isinstance(info.value.__cause__, OSError)
    assert "disk on fire" in str(info.value)
    reader.close()


def test_end_of_input_with_no_splits() -> None:
    reader = make_reader(lambda: ListSplitReader())
    reader.notify_no_more_splits()
    assert reader.poll_next(Collect()) is InputStatus.END_OF_INPUT
    assert reader.is_available().done()
    reader.close()


def test_close_stops_blocked_fetchers_within_timeout() -> None:
    block = threading.Event()
    readers: list[ListSplitReader] = []

    def factory() -> ListSplitReader:
        r = ListSplitReader(block=block)
        readers.append(r)
        return r

    reader = make_reader(factory, fetchers=2)
    reader.add_splits([ListSplit("a", (1, 2, 3)), ListSplit("b", (4,))])
    time.sleep(0.2)
    before = {t.name for t in threading.enumerate() if t.name.startswith("split-fetcher")}
    assert before
    t0 = time.monotonic()
    reader.close()
    assert time.monotonic() - t0 < 3
    after = {t.name for t in threading.enumerate() if t.name.startswith("split-fetcher")}
    assert not (before & after)
    assert all(r.closed for r in readers)


def test_back_pressure_bounds_fetches_ahead_of_the_consumer() -> None:
    split_reader = ListSplitReader(batch=1)
    reader = make_reader(lambda: split_reader, capacity=2)
    reader.add_splits([ListSplit("a", tuple(range(1000)))])
    time.sleep(0.3)
    # capacity 2 in the queue + one fetched and waiting to be put
    assert split_reader.fetches <= 3
    reader.close()


def test_removed_split_records_are_dropped() -> None:
    reader = make_reader(lambda: ListSplitReader(batch=5))
    reader.add_splits([ListSplit("a", tuple(range(10)))])
    reader._states.pop("a")
    out = Collect()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and reader.poll_next(out) is not InputStatus.MORE_AVAILABLE:
        time.sleep(0.01)
    assert out.items == []
    reader.close()
