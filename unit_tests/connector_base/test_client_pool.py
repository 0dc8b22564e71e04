"""``IdleClientPool``: reuse per key, closing when idle, and forgetting idle clients on a task retry."""

from __future__ import annotations

import time

from connector_base.client_pool import IdleClientPool, close_all_idle
from connector_base.spark.partition_reader import forget_pooled_clients_on_retry


class _Client:
    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = False


def _pool(idle_timeout_s: float = 60.0) -> IdleClientPool[_Client]:
    def close(client: _Client) -> None:
        client.closed = True

    return IdleClientPool("test-clients", close, idle_timeout_s, max_idle_per_key=2)


def test_a_released_client_is_reused_for_its_key_only() -> None:
    pool = _pool()
    a = pool.acquire("k1", lambda: _Client("a"))
    pool.release("k1", a)
    assert pool.acquire("k2", lambda: _Client("b")).name == "b"
    assert pool.acquire("k1", lambda: _Client("c")) is a
    assert pool.created == 2
    broken = pool.acquire("k1", lambda: _Client("d"))
    pool.release("k1", broken, reusable=False)
    assert broken.closed and pool.idle_count() == 0


def test_idle_clients_close_after_the_timeout() -> None:
    pool = _pool(idle_timeout_s=0.2)
    client = pool.acquire("k", lambda: _Client("a"))
    pool.release("k", client)
    deadline = time.monotonic() + 10
    while not client.closed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert client.closed and pool.idle_count() == 0


def test_a_retried_task_forgets_every_idle_client_a_first_attempt_keeps_them() -> None:
    close_all_idle()  # other tests' pools in this process
    first, second = _pool(), _pool()
    a, b = first.acquire("k", lambda: _Client("a")), second.acquire("k", lambda: _Client("b"))
    first.release("k", a)
    second.release("k", b)
    assert forget_pooled_clients_on_retry(0) == 0
    assert not a.closed and not b.closed
    assert forget_pooled_clients_on_retry(1) == 2
    assert a.closed and b.closed
    assert first.acquire("k", lambda: _Client("fresh")).name == "fresh"
