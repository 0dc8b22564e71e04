"""The moto endpoint keeps every acknowledged record when PutRecords calls reach one shard at once."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from sparkflow_testing.kinesis.endpoint import KinesisEndpoint, start_moto


@pytest.fixture(scope="module")
def moto() -> Iterator[KinesisEndpoint]:
    endpoint = start_moto()
    yield endpoint
    endpoint.stop()


def _all_records(endpoint: KinesisEndpoint, stream: str) -> list[bytes]:
    client = endpoint.client()
    shard = client.list_shards(StreamName=stream)["Shards"][0]["ShardId"]
    iterator = client.get_shard_iterator(StreamName=stream, ShardId=shard, ShardIteratorType="TRIM_HORIZON")[
        "ShardIterator"
    ]
    got: list[bytes] = []
    while True:
        resp = client.get_records(ShardIterator=iterator, Limit=10_000)
        got.extend(r["Data"] for r in resp["Records"])
        if not resp["Records"]:
            return got
        iterator = resp["NextShardIterator"]


@pytest.mark.timeout(180)
def test_concurrent_puts_on_one_shard_lose_nothing(moto: KinesisEndpoint) -> None:
    # moto's own threaded server loses some of these (two calls take the same sequence number)
    stream = moto.create_stream(1)
    threads, calls, per_call = 16, 4, 250
    errors: list[BaseException] = []

    def put(t: int) -> None:
        try:
            client = moto.client()
            for c in range(calls):
                entries = [{"Data": f"{t}-{c}-{i}".encode(), "PartitionKey": "k"} for i in range(per_call)]
                assert client.put_records(StreamName=stream, Records=entries)["FailedRecordCount"] == 0
        except BaseException as e:  # reported by the test thread below
            errors.append(e)

    workers = [threading.Thread(target=put, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert not errors, errors
    got = _all_records(moto, stream)
    assert len(got) == len(set(got)) == threads * calls * per_call
