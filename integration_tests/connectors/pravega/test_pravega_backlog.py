"""Pravega backlog (issue 13): unread bytes of the planned segment ranges, with hysteresis."""

from __future__ import annotations

import pytest
from pravega_helpers import new_stream, read_options, write_events

from connector_base.spark import ReadLimitOptions
from connector_base.spark.backlog import BacklogOptions, BacklogSizing
from connectors.pravega import PravegaSegmentPlanner, PravegaSegmentSplit, PravegaSourceOptions
from sparkflow_testing.pravega.cluster import PravegaCluster

pytestmark = [pytest.mark.integration]

EVENT_BYTES = 1000
"""Each event: an 8-byte header and 992 bytes of payload in the segment."""


@pytest.mark.timeout(120)
def test_unread_bytes_enter_and_leave_backlog(pravega_cluster: PravegaCluster) -> None:
    scope, stream = new_stream(pravega_cluster, segments=1)
    write_events(pravega_cluster, scope, stream, [("k", b"x" * (EVENT_BYTES - 8))] * 100)
    options = PravegaSourceOptions.parse(read_options(pravega_cluster, scope, stream), streaming=True)
    thresholds = {"backlog.enterBytes": "50000", "backlog.exitBytes": "10000"}
    sizing = BacklogSizing(BacklogOptions.parse(thresholds, ReadLimitOptions()))
    planner = PravegaSegmentPlanner(options)
    try:
        split = PravegaSegmentSplit(scope, stream, 0, 0)
        (end,) = planner.end_positions({split.split_id: (split, 0)}).values()
        assert end == 100 * EVENT_BYTES

        def lag_from(position: int) -> int | None:
            return sizing.update(planner, {split.split_id: (split, position, end)}, False).bytes

        assert lag_from(0) == 100_000 and sizing.in_backlog
        assert lag_from(end - 20 * EVENT_BYTES) == 20_000 and sizing.in_backlog  # above the exit
        assert lag_from(end - 10 * EVENT_BYTES) == 10_000 and not sizing.in_backlog
        assert lag_from(end - 40 * EVENT_BYTES) == 40_000 and not sizing.in_backlog  # below the enter
    finally:
        planner.close()
