"""``format("pravega")`` with segment splits passes the connector test kit (local runtime and Spark)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pravega_helpers import keyed_events, new_stream, read_options, spark, write_events

from connector_base.testing import SourceTestContext, SourceTestSuite
from connectors.pravega import PravegaSource, PravegaSourceOptions
from connectors.pravega.split import OPEN_END, PravegaSegmentSplit
from connectors.pravega.split_reader import FETCH_BYTES_CONFIG
from sparkflow_testing.pravega.cluster import PravegaCluster

pytestmark = [pytest.mark.integration]
__all__ = ["spark"]
GOLDEN = Path(__file__).parents[3] / "unit_tests" / "connectors" / "pravega" / "golden"


class PravegaSegmentTestContext(SourceTestContext):
    """A fresh 3-segment stream per test; ``add_split`` scales a segment through the controller."""

    spark_format = "pravega"
    max_records_option = "maxEventsPerTrigger"
    # reads of 1 KiB: a segment's 200 events take several fetches, so a mid-split snapshot exists
    reader_config = {FETCH_BYTES_CONFIG: 1024}

    def __init__(self, cluster: PravegaCluster) -> None:
        self.cluster = cluster
        self.scope, self.stream = new_stream(cluster, segments=3)
        self.supports_new_splits = True
        self.next = 0

    def _options(self) -> dict[str, str]:
        return read_options(self.cluster, self.scope, self.stream, discovery_interval_ms="100")

    def create_source(self, continuous: bool) -> PravegaSource:
        return PravegaSource(PravegaSourceOptions.parse(self._options(), streaming=continuous))

    def write_records(self, count: int) -> list[Any]:
        events = keyed_events("kit", count, keys=10, start=self.next)
        self.next += count
        write_events(self.cluster, self.scope, self.stream, events)
        return [(payload, self.scope, self.stream) for _k, payload in events]

    def add_split(self, count: int) -> list[Any]:
        admin = self.cluster.admin
        first = admin.active_segments(self.scope, self.stream)[0]
        admin.split(self.scope, self.stream, first["id"])
        return self.write_records(count)

    def spark_options(self, continuous: bool) -> dict[str, str]:
        return {**self._options(), "maxEventsPerTrigger": "250"}

    def split_golden_files(self) -> dict[str, Any]:
        split = PravegaSegmentSplit("sc", "st", (1 << 32) | 3, 120, OPEN_END, (1, 2))
        return {str(GOLDEN / "segment_split_v1.json"): split}

    def invalid_options(self) -> list[tuple[dict[str, str], str]]:
        base = self._options()
        return [
            ({**base, "controller": "nowhere"}, "'controller'"),
            ({**base, "start_stream_cut": "soon"}, "'start_stream_cut'"),
            ({**base, "end_stream_cut": "other/stream:0=5"}, "'end_stream_cut'"),
            ({**base, "maxBytesPerTrigger": "-5"}, "'maxBytesPerTrigger'"),
            ({**base, "colour": "red"}, "'colour'"),
        ]

    def key(self, record: Any) -> Hashable:
        return (bytes(record[0]), record[1], record[2])


class TestPravegaSegmentSplits(SourceTestSuite):
    @pytest.fixture
    def source_context(self, pravega_cluster: PravegaCluster) -> Iterator[PravegaSegmentTestContext]:
        ctx = PravegaSegmentTestContext(pravega_cluster)
        yield ctx
        ctx.close()
