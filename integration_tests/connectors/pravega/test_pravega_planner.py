"""The driver-side planner: tails, admission cuts at event boundaries, finished segments."""

from __future__ import annotations

import pytest
from pravega_helpers import new_stream, read_options, write_events

from connectors.pravega import PravegaSegmentPlanner, PravegaSegmentSplit, PravegaSourceOptions
from sparkflow_testing.pravega.cluster import PravegaCluster

pytestmark = [pytest.mark.integration]


@pytest.mark.timeout(120)
def test_cuts_are_event_boundaries_within_the_limits(pravega_cluster: PravegaCluster) -> None:
    cluster = pravega_cluster
    scope, stream = new_stream(cluster, segments=1)
    payloads = [bytes([65 + i % 26]) * (1 + (i * 37) % 300) for i in range(400)]
    write_events(cluster, scope, stream, [("k", p) for p in payloads])
    boundaries = [0]
    for p in payloads:
        boundaries.append(boundaries[-1] + 8 + len(p))
    options = PravegaSourceOptions.parse(
        read_options(cluster, scope, stream, maxEventsPerTrigger="50"), streaming=True
    )
    planner = PravegaSegmentPlanner(options)
    try:
        split = PravegaSegmentSplit(scope, stream, 0, 0)
        (end,) = planner.end_positions({split.split_id: (split, 0)}).values()
        assert end == boundaries[-1]
        assert planner.backlog(split, 0, end).records == 51  # counted up to the limit + 1
        for start_index in (0, 17, 333):
            start = boundaries[start_index]
            cut = planner.cut(split, start, end, 50, None)
            assert cut == boundaries[min(start_index + 50, 400)]
            cut = planner.cut(split, start, end, None, 5000)
            assert cut in boundaries and cut - start <= 5000 and cut > start
            nxt = boundaries[boundaries.index(cut) + 1] if cut != end else None
            assert nxt is None or nxt - start > 5000
            assert planner.cut(split, start, end, 3, 5000) == min(cut, boundaries[start_index + 3])
        # one event at least, even when it is larger than the byte limit
        assert planner.cut(split, 0, end, None, 1) == boundaries[1]
        assert not planner.is_finished(split, end)
    finally:
        planner.close()
    cluster.admin.scale(scope, stream, [0], [(0.0, 1.0)])  # seal segment 0
    planner = PravegaSegmentPlanner(options)
    try:
        assert planner.is_finished(split, boundaries[-1])
        assert not planner.is_finished(split, boundaries[-2])
    finally:
        planner.close()
