"""``HybridSplitPlanner``: the Spark planner of a hybrid source; each split goes to its stage's planner."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from typing_extensions import override

from connector_base.hybrid.split import HybridSourceSplit
from connector_base.hybrid.stages import HybridStages
from connector_base.spark.planner import Backlog, Position, RangePacking, SplitPlanner

__all__ = ["HybridSplitPlanner"]


class HybridSplitPlanner(SplitPlanner[HybridSourceSplit]):
    """Positions are the child planners' positions; a split's stage picks the planner.

    Two duties of the hybrid source live here, on the driver: ``is_finished`` tells the enumerator
    which splits are read (so it switches only then), and the splits of a stage just switched to
    are held at their starting positions until the bridge asks about them again, which it does
    for the splits of the start offset of the next micro-batch: so the switch is a micro-batch of
    its own, logged before the next source is read.

    Threading: the driver's stream-reader thread only, as every planner.
    """

    def __init__(self, source: HybridStages) -> None:
        self._source = source
        self._planners: dict[int, SplitPlanner[Any]] = {}

    def _planner(self, stage: int) -> SplitPlanner[Any]:
        if stage not in self._planners:
            child = self._source.driver_state.sources.get(stage) or self._source.child(stage)
            planner = self._source.stages[stage].planner(child)
            planner.open()
            self._planners[stage] = planner
        return self._planners[stage]

    def _by_stage(
        self, splits: Mapping[str, tuple[HybridSourceSplit, Position]]
    ) -> dict[int, dict[str, tuple[Any, Position]]]:
        grouped: dict[int, dict[str, tuple[Any, Position]]] = {}
        for sid, (split, pos) in splits.items():
            grouped.setdefault(split.stage, {})[sid] = (split.split, pos)
        return grouped

    @override
    def close(self) -> None:
        planners, self._planners = self._planners, {}
        for planner in planners.values():
            planner.close()

    @override
    def start_position(self, split: HybridSourceSplit) -> Position:
        state = self._source.driver_state
        if state.switched_to is not None and split.stage == state.switched_to:
            state.held.add(split.split_id)
        return self._planner(split.stage).start_position(split.split)

    @override
    def end_positions(self, splits: Mapping[str, tuple[HybridSourceSplit, Position]]) -> dict[str, Position]:
        ends: dict[str, Position] = {}
        for stage, group in self._by_stage(splits).items():
            ends.update(self._planner(stage).end_positions(group))
        for sid in self._source.driver_state.held & ends.keys():
            ends[sid] = splits[sid][1]
        return ends

    @override
    def target_positions(
        self, splits: Mapping[str, tuple[HybridSourceSplit, Position]]
    ) -> dict[str, Position]:
        targets: dict[str, Position] = {}
        for stage, group in self._by_stage(splits).items():
            targets.update(self._planner(stage).target_positions(group))
        return targets

    @override
    def backlog(self, split: HybridSourceSplit, start: Position, end: Position) -> Backlog:
        return self._planner(split.stage).backlog(split.split, start, end)

    @override
    def cut(
        self,
        split: HybridSourceSplit,
        start: Position,
        end: Position,
        max_records: int | None,
        max_bytes: int | None,
    ) -> Position:
        return self._planner(split.stage).cut(split.split, start, end, max_records, max_bytes)

    @override
    def smallest_cut(self, split: HybridSourceSplit, start: Position, end: Position) -> Position:
        return self._planner(split.stage).smallest_cut(split.split, start, end)

    @override
    def is_finished(self, split: HybridSourceSplit, position: Position) -> bool:
        state = self._source.driver_state
        if split.split_id in state.held:  # asked about it: it is in a logged offset now
            state.held.discard(split.split_id)
            if not state.held:
                state.switched_to = None
        finished = self._planner(split.stage).is_finished(split.split, position)
        if finished:
            state.finished.add(split.split_id)
        return finished

    @override
    def range_splits(
        self, split: HybridSourceSplit, start: Position, end: Position
    ) -> list[HybridSourceSplit]:
        return [
            HybridSourceSplit(split.stage, s)
            for s in self._planner(split.stage).range_splits(split.split, start, end)
        ]

    @override
    def on_commit(self, positions: Mapping[str, tuple[HybridSourceSplit, Position]]) -> None:
        for stage, group in self._by_stage(positions).items():
            self._planner(stage).on_commit(group)

    @override
    def discovers_during_available_now(self) -> bool:
        """The next stage's splits appear only once the previous stage is read."""
        return True

    @override
    def packing(self, split: HybridSourceSplit) -> RangePacking | None:
        return self._planner(split.stage).packing(split.split)

    @override
    def push_filters(self, filters: Sequence[Any]) -> None:
        """The hybrid data source accepts no filters (each stage answers them differently)."""
