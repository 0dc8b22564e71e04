"""Reader-group splits (FLIP-27's Pravega mapping) in the local runtime.

The connector test kit's local checks (bounded read, checkpoint and restore, failed reader, splits
appearing through a scale) run for this mode; the Spark checks do not, because Spark refuses
``mode=reader_group`` (tested in test_pravega_read.py, reasons in docs/pravega.md). The scale tests merge two
segments owned by different readers and split a third while the group reads, then checkpoint and
restore, or fail a reader: every event exactly once.
"""

from __future__ import annotations

import collections
import os
import time
from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pravega_helpers import keyed_events, new_stream, read_options, write_events

from connector_base.runtime import LocalRuntime
from connector_base.testing import SourceTestContext, SourceTestSuite
from connectors.pravega.options import PravegaSourceOptions
from connectors.pravega.reader_group_source import PravegaReaderGroupSource
from connectors.pravega.split_reader import FETCH_BYTES_CONFIG
from sparkflow_testing.pravega.cluster import (
    PravegaCluster,
    official_client_available,
    run_isolated,
    unique_name,
)

pytestmark = [pytest.mark.integration]
GOLDEN = Path(__file__).parents[3] / "unit_tests" / "connectors" / "pravega" / "golden"


def _scale(cluster: PravegaCluster, scope: str, stream: str) -> None:
    """Split the highest key range, then merge the two lowest (owned by different readers).

    Split first: Pravega refuses a scale that leaves fewer segments than the stream was created with.
    """
    admin = cluster.admin
    active = sorted(admin.active_segments(scope, stream), key=lambda s: s["min_key"])
    low, second, high = active[0], active[1], active[-1]
    admin.split(scope, stream, high["id"])
    admin.scale(scope, stream, [low["id"], second["id"]], [(low["min_key"], second["max_key"])])


class PravegaReaderGroupTestContext(SourceTestContext):
    """A fresh 3-segment stream and group per test; ``add_split`` scales through the controller."""

    spark_format = "pravega"
    # reads of 1 KiB: a segment's events take several fetches, so a mid-split snapshot exists
    reader_config = {FETCH_BYTES_CONFIG: 1024}

    def __init__(self, cluster: PravegaCluster) -> None:
        self.cluster = cluster
        self.scope, self.stream = new_stream(cluster, segments=3)
        self.group = unique_name("rg")
        self.supports_new_splits = True
        self.next = 0

    def spark_options(self, continuous: bool) -> dict[str, str]:
        return read_options(
            self.cluster, self.scope, self.stream, mode="reader_group", reader_group=self.group
        )

    def create_source(self, continuous: bool) -> PravegaReaderGroupSource:
        options = PravegaSourceOptions.parse(self.spark_options(continuous), streaming=continuous)
        return PravegaReaderGroupSource(options)

    def write_records(self, count: int) -> list[Any]:
        events = keyed_events("kit", count, keys=10, start=self.next)
        self.next += count
        write_events(self.cluster, self.scope, self.stream, events)
        return [(payload,) for _k, payload in events]

    def add_split(self, count: int) -> list[Any]:
        _scale(self.cluster, self.scope, self.stream)
        return self.write_records(count)

    def key(self, record: Any) -> Hashable:
        return (bytes(record[0]),)

    def split_golden_files(self) -> dict[str, Any]:
        from connectors.pravega.reader_group_split import PravegaReaderGroupSplit, ReaderSegmentPosition

        merged = 1 << 32
        positions = (ReaderSegmentPosition(2, 120), ReaderSegmentPosition(merged, 0, 300, (0, 1)))
        return {
            str(GOLDEN / "reader_group_split_v1.json"): PravegaReaderGroupSplit("shop", "orders", "rg", 1),
            str(GOLDEN / "reader_group_split_v2.json"): PravegaReaderGroupSplit(
                "shop", "orders", "rg", 1, positions, ((2, 500), (merged, 300))
            ),
        }


class TestPravegaReaderGroupSplits(SourceTestSuite):
    """The kit's local checks; Spark refuses the mode, so its Spark checks are not collected."""

    test_spark_batch_and_available_now_stream_agree = None  # type: ignore[assignment]
    test_invalid_options_fail_early_and_clearly = None  # type: ignore[assignment]
    test_spark_stream_honours_the_limit_and_restarts_from_its_checkpoint = None  # type: ignore[assignment]

    @pytest.fixture
    def source_context(self, pravega_cluster: PravegaCluster) -> Iterator[PravegaReaderGroupTestContext]:
        ctx = PravegaReaderGroupTestContext(pravega_cluster)
        yield ctx
        ctx.close()


def _exactly_once(records: list[Any], expected: list[bytes]) -> dict[str, int]:
    got = collections.Counter(bytes(r[0]) for r in records)
    want = collections.Counter(expected)
    return {"missing": sum((want - got).values()), "extra": sum((got - want).values())}


def _wait_distinct(rt: LocalRuntime[Any, Any, Any], prior: list[Any], want: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while len({bytes(r[0]) for r in prior + rt.records()}) < want:
        rt.check_errors()
        if time.monotonic() > deadline:
            raise TimeoutError(f"not all {want} events within {timeout}s")
        time.sleep(0.05)
    time.sleep(1.0)  # a duplicate would show up now


@pytest.mark.timeout(240)
def test_checkpoint_and_restore_across_a_scale(pravega_cluster: PravegaCluster, tmp_path: Any) -> None:
    ctx = PravegaReaderGroupTestContext(pravega_cluster)
    expected = [r[0] for r in ctx.write_records(300)]
    path = os.path.join(str(tmp_path), "ckpt.json")
    rt = LocalRuntime(
        ctx.create_source(continuous=True),
        2,
        checkpoint_path=path,
        reader_config={"source.reader.element.queue.capacity": 1},
    )
    rt.start()
    rt.wait_for_records(100, timeout=120)
    expected += [r[0] for r in ctx.add_split(300)]
    rt.wait_for_records(450, timeout=120)
    rt.checkpoint()
    first = rt.committed()
    rt.stop()
    with LocalRuntime(ctx.create_source(continuous=True), 2, checkpoint_path=path) as rt2:
        rt2.start(restore_from=path)
        _wait_distinct(rt2, first, len(expected), timeout=120)
        result = _exactly_once(first + rt2.records(), expected)
    assert result == {"missing": 0, "extra": 0}, result


@pytest.mark.timeout(240)
def test_failed_reader_across_a_scale(pravega_cluster: PravegaCluster) -> None:
    ctx = PravegaReaderGroupTestContext(pravega_cluster)
    expected = [r[0] for r in ctx.write_records(300)]
    with LocalRuntime(
        ctx.create_source(continuous=True), 2, reader_config={"source.reader.element.queue.capacity": 1}
    ) as rt:
        rt.start()
        rt.wait_for_records(100, timeout=120)
        rt.checkpoint()
        expected += [r[0] for r in ctx.add_split(300)]
        rt.wait_for_records(400, timeout=120)
        rt.fail_reader(0)
        _wait_distinct(rt, [], len(expected), timeout=120)
        result = _exactly_once(rt.records(), expected)
    assert result == {"missing": 0, "extra": 0}, result


@pytest.mark.timeout(180)
def test_bounded_read_follows_successors_to_the_end_cut(pravega_cluster: PravegaCluster) -> None:
    ctx = PravegaReaderGroupTestContext(pravega_cluster)
    expected = [r[0] for r in ctx.write_records(200)]
    expected += [r[0] for r in ctx.add_split(200)]
    with LocalRuntime(ctx.create_source(continuous=False), 2) as rt:
        rt.start()
        rt.wait_for_records(1, timeout=120)  # the readers have their splits: the end cut is resolved
        ctx.write_records(100)  # after the end cut: not read
        result = _exactly_once(rt.wait_finished(timeout=120), expected)
    assert result == {"missing": 0, "extra": 0}, result


def _official_group_positions(cluster: PravegaCluster, scope: str, stream: str) -> dict[str, Any]:
    import asyncio

    import pravega_client

    group = cluster.manager.create_reader_group(unique_name("rg"), scope, stream, False)
    reader = group.create_reader("r0")

    async def one_slice() -> Any:
        return await reader.get_segment_slice_async()

    segment_slice = asyncio.run(one_slice())
    events = list(segment_slice)
    reader.release_segment(segment_slice)
    after_release = group.get_streamcut().get_segment_offset_map()
    reader.reader_offline()
    after_offline = group.get_streamcut().get_segment_offset_map()
    try:
        pravega_client.StreamCuts()
        constructible = True
    except TypeError:
        constructible = False
    return {
        "event_attributes": sorted(a for a in dir(events[0]) if not a.startswith("_")),
        "slice_attributes": sorted(a for a in dir(segment_slice) if not a.startswith("_")),
        "released_moves_cut": any(after_release.values()),
        "offline_moves_cut": any(after_offline.values()),
        "stream_cut_constructible": constructible,
    }


@pytest.mark.skipif(
    not official_client_available(), reason="the official client (pravega 0.3.8) installs on CPython 3.11"
)
def test_official_client_cannot_checkpoint_a_reader_group(pravega_cluster: PravegaCluster) -> None:
    """Why this mode reads by offset itself (docs/pravega.md): the official client's limits, shown."""
    scope, stream = new_stream(pravega_cluster, segments=2)
    write_events(pravega_cluster, scope, stream, keyed_events("o", 40, keys=4))
    found = run_isolated(_official_group_positions, pravega_cluster, scope, stream, timeout=120)
    assert found == {
        "event_attributes": ["data", "offset", "to_str"],  # no segment
        "slice_attributes": [],  # a slice does not say its segment either
        "released_moves_cut": False,  # releasing a slice does not record the position in the group
        "offline_moves_cut": True,  # only a reader going offline does
        "stream_cut_constructible": False,  # a stream cut cannot be built from saved offsets
    }, found


def test_reader_group_options_are_checked() -> None:
    from connector_base import InvalidOptionError

    base = {"controller": "tcp://127.0.0.1:1", "scope": "s", "stream": "t", "mode": "reader_group"}
    with pytest.raises(InvalidOptionError, match="'reader_group'"):
        PravegaReaderGroupSource(PravegaSourceOptions.parse(base, streaming=True))
    with pytest.raises(InvalidOptionError, match="'stream'"):
        PravegaReaderGroupSource(
            PravegaSourceOptions.parse({**base, "reader_group": "g", "stream": "s/t,s/u"}, streaming=True)
        )
