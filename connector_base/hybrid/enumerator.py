"""``HybridSplitEnumerator``: runs the child enumerators one after the other, switching when a stage is done.

A stage is done when its enumerator has said no more splits and, in streaming, the planner has seen
each split it handed out read to its end (``DriverSwitchState.finished``), so a micro-batch never
spans two stages. The next stage starts where the ``SwitchStart`` says: for ``derived``, the
previous stage's splits are read once more on the driver for their maximum event time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc
from typing_extensions import override

from connector_base.enumerator import ReaderInfo, SplitEnumerator, SplitEnumeratorContext
from connector_base.errors import ConnectorError
from connector_base.hybrid.split import HybridSourceSplit
from connector_base.hybrid.stage import conform_batch
from connector_base.hybrid.stages import HybridStages
from connector_base.hybrid.switch_start import SwitchStartKind
from connector_base.serialization import Json, VersionedSerializer

__all__ = ["HybridEnumeratorState", "HybridEnumeratorStateSerializer", "HybridSplitEnumerator"]

LOG = logging.getLogger(__name__)

_UNITS_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}
"""Arrow timestamp units; integer event-time columns are taken as milliseconds."""

R = TypeVar("R")
"""The result type of an asynchronous call."""


@dataclass(slots=True)
class HybridEnumeratorState:
    """The checkpoint: the active stage, its child's checkpoint, and what that stage handed out.

    ``child_state`` is the child's versioned checkpoint (``None`` before the stage started);
    ``stage_splits`` the active stage's splits handed out so far (child serialized), ``finished``
    the ids of those read to their end; ``starting_timestamps`` the timestamp each switched-to
    stage started at (``None``: its own options).
    """

    stage: int = 0
    child_state: Json = None
    stage_splits: list[Json] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)
    child_done: bool = False
    starting_timestamps: dict[int, int | None] = field(default_factory=dict)


class HybridEnumeratorStateSerializer(VersionedSerializer[HybridEnumeratorState]):
    """Version 1: the fields of ``HybridEnumeratorState``; stage keys of timestamps as strings."""

    @property
    @override
    def version(self) -> int:
        return 1

    @override
    def to_json(self, value: HybridEnumeratorState) -> Json:
        return {
            "stage": value.stage,
            "child": value.child_state,
            "stageSplits": list(value.stage_splits),
            "finished": sorted(value.finished),
            "childDone": value.child_done,
            "startingTimestamps": {str(k): v for k, v in sorted(value.starting_timestamps.items())},
        }

    @override
    def from_json(self, version: int, data: Json) -> HybridEnumeratorState:
        match version:
            case 1:
                return HybridEnumeratorState(
                    int(data["stage"]),
                    data["child"],
                    list(data["stageSplits"]),
                    [str(s) for s in data["finished"]],
                    bool(data["childDone"]),
                    {int(k): (None if v is None else int(v)) for k, v in data["startingTimestamps"].items()},
                )
            case _:
                raise self.unsupported(version)


class _StageContext(SplitEnumeratorContext[Any]):
    """The context a child enumerator sees: its splits are tagged with the stage on their way out.

    Calls of a closed stage are dropped. While a stage is being switched to, its first calls without
    delay run at once, so its splits are there in the same planning round (batch reads plan once).
    """

    def __init__(self, owner: HybridSplitEnumerator, stage: int) -> None:
        self._owner = owner
        self._stage = stage
        self.closed = False
        self.inline = False

    @override
    def current_parallelism(self) -> int:
        return self._owner.context.current_parallelism()

    @override
    def registered_readers(self) -> Mapping[int, ReaderInfo]:
        return self._owner.context.registered_readers()

    @override
    def assign_splits(self, assignment: Mapping[int, Sequence[Any]]) -> None:
        if self.closed:
            return
        wrapped = {
            sub: [HybridSourceSplit(self._stage, s) for s in splits] for sub, splits in assignment.items()
        }
        for splits in wrapped.values():
            self._owner.record_assigned(splits)
        self._owner.context.assign_splits(wrapped)

    @override
    def signal_no_more_splits(self, subtask_id: int) -> None:
        if self.closed:
            return
        self._owner.child_done = True
        if self._owner.is_last_stage:
            self._owner.context.signal_no_more_splits(subtask_id)

    @override
    def call_async(
        self,
        callable_: Callable[[], R],
        handler: Callable[[R | None, BaseException | None], None],
        initial_delay_s: float = 0.0,
        period_s: float | None = None,
    ) -> None:
        def guarded_call() -> R | None:
            return None if self.closed else callable_()

        def guarded_handler(result: R | None, error: BaseException | None) -> None:
            if not self.closed:
                handler(result, error)

        if self.inline and initial_delay_s <= 0:
            try:
                result, error = guarded_call(), None
            except Exception as e:  # the handler decides, as with every context
                result, error = None, e
            guarded_handler(result, error)
            if period_s is None:
                return
            initial_delay_s = period_s
        self._owner.context.call_async(guarded_call, guarded_handler, initial_delay_s, period_s)

    @override
    def run_in_coordinator_thread(self, action: Callable[[], Any]) -> None:
        self._owner.context.run_in_coordinator_thread(action)

    @override
    def set_is_processing_backlog(self, is_processing_backlog: bool) -> None:
        if self._owner.is_last_stage and not self.closed:
            self._owner.context.set_is_processing_backlog(is_processing_backlog)


class HybridSplitEnumerator(SplitEnumerator[HybridSourceSplit, HybridEnumeratorState]):
    """Runs one child enumerator at a time; says it is processing backlog while a bounded stage runs.

    Threading: every method on the coordinator thread, as every enumerator; the child's
    ``call_async`` work goes through the same context.
    """

    def __init__(
        self,
        source: HybridStages,
        context: SplitEnumeratorContext[HybridSourceSplit],
        state: HybridEnumeratorState | None,
    ) -> None:
        self.context = context
        self._source = source
        state = state or HybridEnumeratorState()
        if not 0 <= state.stage < len(source.stages):
            raise ConnectorError(
                f"the checkpoint is at stage {state.stage}, but this hybrid source has "
                f"{len(source.stages)} stages: the list of sources must not change between runs"
            )
        self._stage = state.stage
        self._restored_child: Json = state.child_state
        serializer = source.child(state.stage).split_serializer
        self._stage_splits: dict[str, HybridSourceSplit] = {}
        for s in state.stage_splits:
            split = HybridSourceSplit(state.stage, serializer.deserialize(s))
            self._stage_splits[split.split_id] = split
        self._finished = set(state.finished)
        self.child_done = state.child_done
        self._starts = dict(state.starting_timestamps)
        self._readers: set[int] = set()
        self._child: SplitEnumerator[Any, Any] | None = None
        self._child_context: _StageContext | None = None

    @property
    def stage(self) -> int:
        """The index of the active stage."""
        return self._stage

    @property
    def is_last_stage(self) -> bool:
        """Whether the active stage is the last one (its own end is the hybrid source's end)."""
        return self._stage == len(self._source.stages) - 1

    def record_assigned(self, splits: Sequence[HybridSourceSplit]) -> None:
        """Remember the active stage's splits (until the switch) to know when all are read."""
        if self.is_last_stage:
            return
        for s in splits:
            self._stage_splits[s.split_id] = s

    # --- stages ---------------------------------------------------------------------------------
    def _open_stage(self, checkpoint: Json, switching: bool) -> None:
        stage = self._source.stages[self._stage]
        child_source = stage.source(self._starts.get(self._stage))
        self._source.driver_state.sources[self._stage] = child_source
        context = _StageContext(self, self._stage)
        context.inline = switching
        if checkpoint is None:
            child = child_source.create_enumerator(context)
        else:
            state = child_source.enumerator_checkpoint_serializer.deserialize(checkpoint)
            child = child_source.restore_enumerator(context, state)
        self._child, self._child_context = child, context
        self.context.set_is_processing_backlog(not self.is_last_stage)
        child.start()
        for subtask in sorted(self._readers):
            child.add_reader(subtask)
        context.inline = False

    def _stage_read(self) -> bool:
        if self.is_last_stage or not self.child_done:
            return False
        if not self._source.streaming:
            return True
        finished = self._finished | (self._source.driver_state.finished & self._stage_splits.keys())
        self._finished = finished
        return all(sid in finished for sid in self._stage_splits)

    def _switch(self) -> None:
        previous = self._source.stages[self._stage]
        starting = self._source.switch_start.starting_timestamp(self._max_event_time_ms())
        assert self._child is not None and self._child_context is not None
        self._child_context.closed = True
        self._child.close()
        self._stage += 1
        self._stage_splits, self._finished, self.child_done = {}, set(), False
        self._starts[self._stage] = starting
        if self._source.streaming:
            self._source.driver_state.switched_to = self._stage
        LOG.info(
            "hybrid source: %s (stage %d) is read; switching to %s (stage %d) starting at %s",
            previous.name,
            self._stage - 1,
            self._source.stages[self._stage].name,
            self._stage,
            "its own starting options" if starting is None else f"timestamp {starting} ms",
        )
        self._open_stage(None, switching=True)

    def _max_event_time_ms(self) -> int | None:
        switch = self._source.switch_start
        if switch.kind is not SwitchStartKind.DERIVED:
            return None
        from connector_base.spark.partition_reader import read_splits_as_arrow

        column = switch.event_time_column
        assert column is not None
        stage = self._source.stages[self._stage]
        target = self._source.schema.field(column)
        one = pa.schema([target])
        child_source = self._source.driver_state.sources.get(self._stage) or self._source.child(self._stage)
        splits = [s.split for s in self._stage_splits.values()]
        best: int | None = None
        for batch in read_splits_as_arrow(child_source, splits, stage.read_schema):
            values = conform_batch(batch, one).column(0)
            top = pc.max(values.cast(pa.int64())).as_py()
            if top is None:
                continue
            if pa.types.is_timestamp(values.type):
                top = top * 1000 // _UNITS_PER_SECOND[values.type.unit]
            if best is None or top > best:
                best = top
        if best is None:
            raise ConnectorError(
                f"cannot derive where stage {self._stage + 1} starts: {stage.name} (stage {self._stage}) "
                f"has no row with a non-null {column!r}; set hybrid.switchStart to timestamp or configured"
            )
        LOG.info("hybrid source: maximum %s of %s is %d ms", column, stage.name, best)
        return best

    # --- SplitEnumerator --------------------------------------------------------------------------
    @override
    def start(self) -> None:
        self._open_stage(self._restored_child, switching=False)
        self._restored_child = None

    @override
    def handle_split_request(self, subtask_id: int, requester_hostname: str | None = None) -> None:
        assert self._child is not None
        self._child.handle_split_request(subtask_id, requester_hostname)
        while self._stage_read():
            self._switch()
            self._child.handle_split_request(subtask_id, requester_hostname)

    @override
    def add_splits_back(self, splits: Sequence[HybridSourceSplit], subtask_id: int) -> None:
        assert self._child is not None
        mine = [s.split for s in splits if s.stage == self._stage]
        if mine:
            self._child.add_splits_back(mine, subtask_id)

    @override
    def add_reader(self, subtask_id: int) -> None:
        assert self._child is not None
        self._readers.add(subtask_id)
        self._child.add_reader(subtask_id)

    @override
    def snapshot_state(self, checkpoint_id: int) -> HybridEnumeratorState:
        assert self._child is not None
        child_source = self._source.driver_state.sources[self._stage]
        child_state = child_source.enumerator_checkpoint_serializer.serialize(
            self._child.snapshot_state(checkpoint_id)
        )
        serializer = child_source.split_serializer
        finished = self._finished | (self._source.driver_state.finished & self._stage_splits.keys())
        return HybridEnumeratorState(
            self._stage,
            child_state,
            [serializer.serialize(s.split) for _sid, s in sorted(self._stage_splits.items())],
            sorted(finished),
            self.child_done,
            dict(self._starts),
        )

    @override
    def notify_checkpoint_complete(self, checkpoint_id: int) -> None:
        if self._child is not None:
            self._child.notify_checkpoint_complete(checkpoint_id)

    @override
    def close(self) -> None:
        if self._child_context is not None:
            self._child_context.closed = True
        if self._child is not None:
            self._child.close()
            self._child = None
