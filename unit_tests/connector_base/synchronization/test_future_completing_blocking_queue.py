from __future__ import annotations

import threading
import time

import pytest

from connector_base.synchronization import FutureCompletingBlockingQueue


def test_poll_never_blocks_and_future_completes_on_put() -> None:
    q: FutureCompletingBlockingQueue[int] = FutureCompletingBlockingQueue(2)
    assert q.poll() is None
    fut = q.available_future()
    assert not fut.done()
    q.put(0, 1)
    assert fut.done()
    assert q.poll() == 1
    assert not q.available_future().done()


def test_put_blocks_when_full_until_poll() -> None:
    q: FutureCompletingBlockingQueue[int] = FutureCompletingBlockingQueue(1)
    q.put(0, 1)
    done = threading.Event()

    def producer() -> None:
        q.put(0, 2)
        done.set()

    t = threading.Thread(target=producer)
    t.start()
    assert not done.wait(0.2)
    assert q.poll() == 1
    assert done.wait(2)
    assert q.poll() == 2
    t.join()


def test_wake_up_releases_a_blocked_put() -> None:
    q: FutureCompletingBlockingQueue[int] = FutureCompletingBlockingQueue(1)
    q.put(7, 1)
    result: list[bool] = []
    t = threading.Thread(target=lambda: result.append(q.put(7, 2)))
    t.start()
    time.sleep(0.1)
    q.wake_up_puts(7)
    t.join(2)
    assert result == [False]
    assert q.size() == 1


def test_notify_available_completes_future_and_reset_renews_it() -> None:
    q: FutureCompletingBlockingQueue[int] = FutureCompletingBlockingQueue()
    fut = q.available_future()
    q.notify_available()
    assert fut.done()
    q.reset_available()
    assert not q.available_future().done()


def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError):
        FutureCompletingBlockingQueue(0)
