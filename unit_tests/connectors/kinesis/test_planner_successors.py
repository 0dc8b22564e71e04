"""Children after parents on the streaming planner: a merged child waits for every parent in the plan.

A merge whose parents end in different micro-batches: one parent is finished (it has left the plan),
the other is still read. The child's range stays empty until that one is finished too. The stream
listing and the head probe are stubbed: the rule under test is the planner's, not the service's.
"""

from __future__ import annotations

from typing import Any

import pytest

from connectors.kinesis import planner as planner_module
from connectors.kinesis.options import KinesisOptions
from connectors.kinesis.planner import KinesisSplitPlanner
from connectors.kinesis.positions import ShardPosition
from connectors.kinesis.shard_discovery import ShardInfo, StreamSnapshot
from connectors.kinesis.split import KinesisShardSplit

NOW_MS = 1_800_000_000_000
SNAPSHOT = StreamSnapshot(
    (
        ShardInfo("shard-a", (), True),
        ShardInfo("shard-b", (), True),
        ShardInfo("shard-c", ("shard-a", "shard-b"), False),
    ),
    NOW_MS,
    24,
)
PARENT_A = KinesisShardSplit("s", "shard-a", ShardPosition.trim_horizon(), None, (), True)
CHILD = KinesisShardSplit("s", "shard-c", ShardPosition.trim_horizon(), None, ("shard-a", "shard-b"), False)


@pytest.fixture()
def planner(monkeypatch: pytest.MonkeyPatch) -> KinesisSplitPlanner:
    monkeypatch.setattr(planner_module, "list_stream", lambda *_args: SNAPSHOT)
    planner = KinesisSplitPlanner(KinesisOptions.parse({"streamName": "s", "region": "us-east-1"}), True)
    # every open shard has records from a minute ago on
    monkeypatch.setattr(planner, "_probe", lambda _split, _pos, _cut: (NOW_MS - 60_000, True))
    return planner


def test_a_merged_child_waits_while_one_parent_is_still_read(planner: KinesisSplitPlanner) -> None:
    a_pos = ShardPosition.at_timestamp(NOW_MS - 3_600_000).to_json()
    c_pos = CHILD.start.to_json()
    # shard-b is finished and has left the plan; shard-a is behind
    ends: dict[str, Any] = planner.end_positions({"shard-a": (PARENT_A, a_pos), "shard-c": (CHILD, c_pos)})
    assert ends["shard-a"] == ShardPosition.shard_end().to_json()
    assert ends["shard-c"] == c_pos, "the child was released while a parent is still being read"


def test_the_child_is_released_once_every_parent_has_left_the_plan(planner: KinesisSplitPlanner) -> None:
    c_pos = CHILD.start.to_json()
    ends = planner.end_positions({"shard-c": (CHILD, c_pos)})
    assert ends["shard-c"] != c_pos
    assert ShardPosition.from_json(ends["shard-c"]).timestamp_ms is not None
