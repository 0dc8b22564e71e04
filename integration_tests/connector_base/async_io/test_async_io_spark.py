"""ordered_wait / unordered_wait on Spark DataFrames, batch and streaming, against real services."""

from __future__ import annotations

import time
from collections import defaultdict

import pytest

from connector_base.async_io import AsyncRetryStrategy, ordered_wait, unordered_wait
from connector_base.errors import InvalidOptionError
from sparkflow_testing.services.async_lookups import HttpLookup, LoopProbe, RedisLookup

pytestmark = [pytest.mark.spark, pytest.mark.integration]

LOOKUP_SCHEMA = "id long, value string, attempt int"


@pytest.fixture
def small_arrow_batches(spark):
    """Arrow batches of 16 rows, so that a task crosses many batch boundaries."""
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = spark.conf.get(key)
    spark.conf.set(key, "16")
    yield
    spark.conf.set(key, before)


def test_ordered_batch_peak_in_flight_is_capacity_and_order_holds(spark, service, small_arrow_batches):
    df = spark.range(0, 400, numPartitions=2)
    # 50 ms per call: long enough for the service to see all 8 calls of a task at once on a busy machine
    fn = HttpLookup(service.url, params={"latency_ms": "50"})
    out = ordered_wait(df, fn, LOOKUP_SCHEMA, timeout=10.0, capacity=8).collect()
    assert [r.id for r in out] == list(range(400))
    assert all(r.value == f"value-{r.id}" for r in out)
    peaks = service.stats()["group_peak"]
    # per task: never above capacity, and reached although each Arrow batch had only 16 rows
    assert sorted(peaks) == ["0", "1"] and all(p == 8 for p in peaks.values()), peaks


def test_unordered_emits_in_completion_order(spark, service):
    df = spark.createDataFrame([(i, 900 - 150 * i) for i in range(6)], "id long, latency_ms int").coalesce(1)
    out = unordered_wait(df, HttpLookup(service.url), LOOKUP_SCHEMA, timeout=10.0, capacity=8).collect()
    assert [r.id for r in out] == [5, 4, 3, 2, 1, 0]


def test_retries_and_timeout_fallback(spark, service):
    df = spark.createDataFrame([(i, 2000 if i == 3 else 5) for i in range(8)], "id long, latency_ms int")
    fn = HttpLookup(service.url, params={"fail_first": "2"}, fallback="timed-out")
    retry = AsyncRetryStrategy.exponential_backoff(3, 0.01, 0.1)
    out = {
        r.id: r for r in ordered_wait(df, fn, LOOKUP_SCHEMA, timeout=0.5, capacity=4, retry=retry).collect()
    }
    assert {i: (out[i].value, out[i].attempt) for i in out} == {
        i: ("timed-out", None) if i == 3 else (f"value-{i}", 3) for i in range(8)
    }
    attempts = service.stats()["attempts"]
    assert all(attempts[str(i)] == 3 for i in range(8) if i != 3)


def test_a_failed_element_fails_the_task_with_its_error(spark, service):
    df = spark.range(0, 20, numPartitions=1)
    fn = HttpLookup(service.url, params={"fail_first": "99"})
    with pytest.raises(Exception, match="503"):
        ordered_wait(df, fn, LOOKUP_SCHEMA, timeout=5.0, capacity=4).collect()


def test_idempotency_key_comes_from_the_source_position(spark, service):
    rows = [("events", p, o, p * 100 + o) for p in range(2) for o in range(5)]
    df = spark.createDataFrame(rows, "topic string, partition int, offset long, id long")
    ordered_wait(df, HttpLookup(service.url), LOOKUP_SCHEMA, timeout=5.0, capacity=4).collect()
    assert service.stats()["keys"] == sorted(f"events/{p}/{o}" for p in range(2) for o in range(5))


def test_one_event_loop_per_worker_reused_across_tasks(spark):
    df = spark.range(0, 40, numPartitions=4)
    pid_loops = defaultdict(set)
    for _ in range(2):
        for r in ordered_wait(
            df, LoopProbe(), "id long, pid long, loop long", timeout=5.0, capacity=4
        ).collect():
            pid_loops[r.pid].add(r.loop)
    # 8 tasks ran in reused (forked) workers; each worker process used one loop for all of them
    assert pid_loops and all(len(loops) == 1 for loops in pid_loops.values()), dict(pid_loops)


def test_bad_arguments_fail_before_the_query_runs(spark, service):
    df = spark.range(1)
    with pytest.raises(InvalidOptionError, match="capacity"):
        ordered_wait(df, HttpLookup(service.url), LOOKUP_SCHEMA, timeout=1.0, capacity=0)
    with pytest.raises(InvalidOptionError, match="timeout"):
        unordered_wait(df, HttpLookup(service.url), LOOKUP_SCHEMA, timeout=-1, capacity=2)
    with pytest.raises(InvalidOptionError, match="idempotency_key_columns"):
        ordered_wait(
            df, HttpLookup(service.url), LOOKUP_SCHEMA, timeout=1.0, capacity=2, idempotency_key_columns=["x"]
        )


def test_streaming_rate_source_enriched_from_redis(spark, redis_db, tmp_path):
    import redis

    client = redis.Redis(redis_db.host, redis_db.port, decode_responses=True)
    for user in range(10):
        client.hset(
            f"user:{user}", mapping={"name": f"name-{user}", "tier": "gold" if user % 2 else "silver"}
        )
    client.close()

    stream = spark.readStream.format("rate").option("rowsPerSecond", 200).option("numPartitions", 2).load()
    stream = stream.selectExpr("value", "value % 10 AS user")
    fn = RedisLookup(redis_db.url, "user", "user:", keep=("value", "user"), fields=("name", "tier"))
    enriched = ordered_wait(
        stream, fn, "value long, user long, name string, tier string", timeout=5.0, capacity=16
    )
    query = (
        enriched.writeStream.format("memory")
        .queryName("async_io_enriched")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="500 milliseconds")
        .start()
    )
    try:
        deadline = time.monotonic() + 60
        while spark.sql("select count(*) from async_io_enriched").collect()[0][0] < 150:
            assert query.exception() is None, query.exception()
            assert time.monotonic() < deadline, "the stream did not produce 150 enriched rows in 60 s"
            time.sleep(0.5)
    finally:
        query.stop()
    rows = spark.sql("select * from async_io_enriched").collect()
    assert all(r.name == f"name-{r.user}" and r.tier == ("gold" if r.user % 2 else "silver") for r in rows)
    assert len({r.value for r in rows}) == len(rows)
