"""The bridge's stream reader asked from an offset other than the one it last returned.

Spark asks ``latestOffset`` from the end of the last planned batch; when that is not the offset
the driver plan stands at (a batch re-planned after a restart of the query's runner, or Spark
replaying from the offset log), the plan is restored from Spark's offset. The restored plan must
answer exactly as the first time, and must keep the open planner: reopening it repeats load()'s
first contact, which fails while a broker restarts.
"""

from __future__ import annotations

import json
from typing import Any

from typing_extensions import override

from connectors.sequence.datasource import SCHEMA, SequenceDataSource
from connectors.sequence.source import SequencePlanner, SequenceSource


class _CountingPlanner(SequencePlanner):
    opened = 0
    closed = 0

    @override
    def open(self) -> None:
        type(self).opened += 1

    @override
    def close(self) -> None:
        type(self).closed += 1


class _CountingDataSource(SequenceDataSource):
    @override
    def create_planner(self, source: SequenceSource) -> Any:
        return _CountingPlanner(source.options)


def _round_trip(offset: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(offset))  # as Spark hands it back
    return loaded


def test_a_rewound_plan_answers_as_before_and_keeps_its_planner() -> None:
    _CountingPlanner.opened = _CountingPlanner.closed = 0
    ds = _CountingDataSource({"partitions": "2", "rowsPerPartition": "1000", "maxRecordsPerTrigger": "100"})
    reader = ds.streamReader(SCHEMA)
    limit = reader.getDefaultReadLimit()
    first = _round_trip(reader.initialOffset())
    ends = [first]
    for _ in range(3):
        ends.append(_round_trip(reader.latestOffset(ends[-1], limit)))
    assert len({json.dumps(e, sort_keys=True) for e in ends}) == 4, "each batch advances"
    # Spark asks again from the end of batch 1, then goes on from there
    replayed = [_round_trip(reader.latestOffset(ends[1], limit))]
    replayed.append(_round_trip(reader.latestOffset(replayed[-1], limit)))
    assert replayed == ends[2:4]
    # and from the very start (a query restarted on an empty offset log, in the same runner)
    assert _round_trip(reader.latestOffset(first, limit)) == ends[1]
    assert _CountingPlanner.opened == 1, "the planner was reopened for a rewind"
    reader.stop()
    assert _CountingPlanner.closed == 1
