"""The mapInArrow driver, run directly on Arrow batches (no Spark, no network)."""

import asyncio
import itertools
import random
import threading
import time

import pyarrow as pa
import pytest
from typing_extensions import override

from connector_base.async_io import (
    AsyncFunction,
    AsyncRetryStrategy,
    AsyncTimeoutError,
    AsyncWaitOperator,
    CallbackAsyncFunction,
    current_idempotency_key,
    empty_result,
)

OUT = pa.schema([("id", pa.int64()), ("note", pa.string())])


def batches(n, rows_per_batch, pulled=None):
    for start in range(0, n, rows_per_batch):
        if pulled is not None:
            pulled.append(start)
        ids = list(range(start, min(n, start + rows_per_batch)))
        yield pa.RecordBatch.from_pydict({"id": ids})


def endless(rows_per_batch, pulled):
    for start in itertools.count(0, rows_per_batch):
        pulled.append(start)
        yield pa.RecordBatch.from_pydict({"id": list(range(start, start + rows_per_batch))})


def operator(fn, *, ordered=True, timeout=5.0, capacity=8, retry=None, key_columns=(), out_rows=8192):
    return AsyncWaitOperator(
        fn,
        OUT,
        ordered=ordered,
        timeout_s=timeout,
        capacity=capacity,
        retry=retry or AsyncRetryStrategy.no_retry(),
        key_columns=key_columns,
        output_batch_rows=out_rows,
    )


def ids(out):
    return [r["id"] for b in out for r in b.to_pylist()]


class Sleeper(AsyncFunction):
    """Sleeps ``latency(id)`` seconds; counts calls in flight."""

    def __init__(self, latency=lambda i: 0.01):
        self.latency = latency
        self.in_flight = 0
        self.peak = 0
        self.opened = self.closed = False

    @override
    async def open(self):
        self.opened = True

    @override
    async def async_invoke(self, value):
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.latency(value["id"]))
        finally:
            self.in_flight -= 1
        return [{"id": value["id"], "note": None}]

    @override
    async def close(self):
        self.closed = True


def test_in_flight_never_exceeds_capacity_and_reaches_it():
    fn = Sleeper()
    out = list(operator(fn, capacity=8)(batches(200, 50)))
    assert ids(out) == list(range(200))
    assert fn.peak == 8
    assert fn.opened and fn.closed


def test_input_is_pulled_only_when_a_slot_frees_even_from_an_endless_input():
    pulled = []
    results = operator(Sleeper(), capacity=4, out_rows=4)(endless(2, pulled))
    first_two = [next(results), next(results)]
    results.close()
    assert ids(first_two) == list(range(8))
    # 8 rows emitted, 4 in flight at most, batches of 2 rows: about 6 batches, never the endless rest
    assert len(pulled) <= 7


def test_ordered_output_crosses_batch_boundaries_without_stalling():
    rnd = random.Random(3)
    latency = {i: rnd.uniform(0.01, 0.05) for i in range(64)}
    fn = Sleeper(lambda i: latency[i])
    out = list(operator(fn, capacity=16)(batches(64, 2)))
    assert ids(out) == list(range(64))
    # batches of 2 rows, yet 16 calls were in flight: elements of 8 batches overlapped
    assert fn.peak == 16


def test_unordered_output_is_in_completion_order():
    fn = Sleeper(lambda i: 0.6 - 0.1 * i)
    out = list(operator(fn, ordered=False, capacity=8)(batches(6, 3)))
    assert ids(out) == [5, 4, 3, 2, 1, 0]


class AlwaysFailing(AsyncFunction):
    def __init__(self, fallback):
        self.attempts = 0
        self.fallback = fallback

    @override
    async def async_invoke(self, value):
        self.attempts += 1
        raise ConnectionError("service down")

    @override
    def timeout(self, value):
        if not self.fallback:
            return super().timeout(value)
        return [{"id": value["id"], "note": "fallback"}]


def test_timeout_covers_all_attempts_and_the_override_emits_a_fallback():
    fn = AlwaysFailing(fallback=True)
    start = time.monotonic()
    out = list(operator(fn, timeout=0.3, retry=AsyncRetryStrategy.fixed_delay(1000, 0.05))(batches(1, 1)))
    elapsed = time.monotonic() - start
    assert [r["note"] for r in out[0].to_pylist()] == ["fallback"]
    assert 2 <= fn.attempts <= 8 and elapsed < 2.0


def test_timeout_without_override_fails_the_task():
    with pytest.raises(AsyncTimeoutError, match="timeout"):
        list(operator(Sleeper(lambda i: 5.0), timeout=0.1)(batches(3, 3)))


class Flaky(AsyncFunction):
    """Fails the first ``failures`` attempts of each element, then answers (``empty`` first, if asked)."""

    def __init__(self, failures, empty_first=False):
        self.failures = failures
        self.empty_first = empty_first
        self.attempts = {}

    @override
    async def async_invoke(self, value):
        n = self.attempts[value["id"]] = self.attempts.get(value["id"], 0) + 1
        if n <= self.failures:
            raise ConnectionError(f"attempt {n}")
        if self.empty_first and n == self.failures + 1:
            return []
        return [{"id": value["id"], "note": f"attempt {n}"}]


def test_fixed_delay_retries_on_exceptions_until_success():
    fn = Flaky(failures=2)
    out = list(operator(fn, retry=AsyncRetryStrategy.fixed_delay(3, 0.01))(batches(5, 5)))
    assert [r["note"] for r in out[0].to_pylist()] == ["attempt 3"] * 5


def test_exponential_backoff_retries_on_an_empty_result():
    fn = Flaky(failures=1, empty_first=True)
    retry = AsyncRetryStrategy.exponential_backoff(4, 0.01, 0.05, retry_on_result=empty_result)
    out = list(operator(fn, retry=retry)(batches(3, 3)))
    assert [r["note"] for r in out[0].to_pylist()] == ["attempt 3"] * 3


def test_retries_exhausted_fail_the_task_with_the_last_error():
    fn = Flaky(failures=5)
    with pytest.raises(ConnectionError, match="attempt 2"):
        list(operator(fn, retry=AsyncRetryStrategy.fixed_delay(2, 0.01))(batches(3, 3)))


def test_a_failure_fails_the_task_cancels_the_rest_and_closes():
    class OneFails(Sleeper):
        cancelled = 0

        @override
        async def async_invoke(self, value):
            if value["id"] == 3:
                raise ValueError("bad row 3")
            try:
                await asyncio.sleep(10 if value["id"] > 3 else 0)
            except asyncio.CancelledError:
                OneFails.cancelled += 1
                raise
            return [{"id": value["id"], "note": None}]

    fn = OneFails()
    start = time.monotonic()
    with pytest.raises(ValueError, match="bad row 3"):
        list(operator(fn, capacity=6)(batches(20, 4)))
    assert time.monotonic() - start < 5 and OneFails.cancelled >= 1 and fn.closed


class Mutating(AsyncFunction):
    """Mutates its input, yields, then reads it back: shared input would show another row's id."""

    def __init__(self):
        self.seen_on_retry = []

    @override
    async def async_invoke(self, value):
        if value.get("touched"):
            raise AssertionError("an attempt saw another attempt's mutation")
        value["touched"] = True
        original = value["id"]
        await asyncio.sleep(0.01)
        if value["id"] % 2 == 0 and not hasattr(self, f"retried_{original}"):
            setattr(self, f"retried_{original}", True)
            raise ConnectionError("retry me")
        return [{"id": value["id"], "note": str(original)}]


def test_each_element_and_attempt_gets_its_own_copy_of_the_input():
    out = list(
        operator(Mutating(), capacity=16, retry=AsyncRetryStrategy.fixed_delay(2, 0.0))(batches(40, 8))
    )
    rows = [r for b in out for r in b.to_pylist()]
    assert [r["id"] for r in rows] == list(range(40))
    assert all(r["note"] == str(r["id"]) for r in rows)


def test_the_idempotency_key_is_the_source_position():
    class Keys(AsyncFunction):
        @override
        async def async_invoke(self, value):
            await asyncio.sleep(0)
            return [{"id": value["offset"], "note": current_idempotency_key()}]

    rows = pa.RecordBatch.from_pydict({"topic": ["t", "t"], "partition": [0, 1], "offset": [5, 6]})
    op = operator(Keys(), key_columns=("topic", "partition", "offset"))
    assert [r["note"] for r in next(op(iter([rows]))).to_pylist()] == ["t/0/5", "t/1/6"]


def test_callback_style_function_completes_from_another_thread():
    class Callback(CallbackAsyncFunction):
        @override
        def invoke(self, value, result_future):
            rows = [{"id": value["id"], "note": "cb"}] * (value["id"] % 3)
            threading.Timer(0.01, result_future.complete, (rows,)).start()

    out = list(operator(Callback())(batches(6, 6)))
    assert ids(out) == [1, 2, 2, 4, 5, 5]


def test_a_large_input_batch_is_taken_a_slice_at_a_time_in_order():
    fn = Sleeper(lambda i: 0.0)
    out = list(operator(fn, capacity=4, out_rows=300)(batches(1000, 1000)))
    assert ids(out) == list(range(1000)) and [b.num_rows for b in out] == [300, 300, 300, 100]
    assert fn.peak <= 4
