"""``HybridSource``: several sources read one after the other (Flink's HybridSource on FLIP-27).

Every stage but the last is bounded. The enumerator runs the child enumerators in turn and switches
when the current one has handed out all its splits and (streaming) the planner has seen each of
them read to its end; the next stage then starts where the ``SwitchStart`` says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from typing_extensions import override

from connector_base.hybrid.split import HybridSourceSplit, HybridSourceSplitSerializer
from connector_base.hybrid.stage import HybridStage
from connector_base.hybrid.switch_start import SwitchStart
from connector_base.source import Boundedness, Source

if TYPE_CHECKING:
    from connector_base.enumerator import SplitEnumeratorContext
    from connector_base.hybrid.enumerator import HybridEnumeratorState, HybridSplitEnumerator
    from connector_base.hybrid.source_reader import HybridSourceReader
    from connector_base.serialization import VersionedSerializer
    from connector_base.source_reader import SourceReaderContext

__all__ = ["HybridSource", "DriverSwitchState"]


@dataclass(slots=True)
class DriverSwitchState:
    """What the enumerator and the planner of one hybrid source share on the driver (never checkpointed).

    ``finished``: split ids the planner saw read to their end. ``held``: splits of a stage that was
    switched to and are not yet in a logged offset (the switch is its own micro-batch).
    ``sources``: the child source each started stage runs with (its starting timestamp applied).
    """

    finished: set[str] = field(default_factory=set)
    held: set[str] = field(default_factory=set)
    switched_to: int | None = None
    sources: dict[int, Source[Any, Any, Any]] = field(default_factory=dict)


class HybridSource(Source[Any, HybridSourceSplit, "HybridEnumeratorState"]):
    """Reads ``stages`` in order, every row conformed to ``schema``.

    ``streaming`` (Spark's ``readStream``): a stage switches only after its splits are read, and
    the next stage's splits are held for one micro-batch; batch reads switch as soon as a stage has
    handed out its splits.
    """

    def __init__(
        self,
        stages: Sequence[HybridStage],
        schema: pa.Schema,
        switch_start: SwitchStart,
        streaming: bool,
    ) -> None:
        if len(stages) < 2:
            raise ValueError(f"a hybrid source needs at least two stages, got {len(stages)}")
        self.stages = list(stages)
        self.schema = schema
        self.switch_start = switch_start
        self.streaming = streaming
        self.driver_state = DriverSwitchState()
        self._children: dict[int, Source[Any, Any, Any]] = {}

    def child(self, stage: int) -> Source[Any, Any, Any]:
        """The child source of ``stage`` built from its own options (readers, serializers)."""
        if stage not in self._children:
            self._children[stage] = self.stages[stage].source()
        return self._children[stage]

    @property
    @override
    def boundedness(self) -> Boundedness:
        return self.child(len(self.stages) - 1).boundedness

    @override
    def create_enumerator(self, context: SplitEnumeratorContext[HybridSourceSplit]) -> HybridSplitEnumerator:
        from connector_base.hybrid.enumerator import HybridSplitEnumerator

        return HybridSplitEnumerator(self, context, None)

    @override
    def restore_enumerator(
        self, context: SplitEnumeratorContext[HybridSourceSplit], checkpoint: HybridEnumeratorState
    ) -> HybridSplitEnumerator:
        from connector_base.hybrid.enumerator import HybridSplitEnumerator

        return HybridSplitEnumerator(self, context, checkpoint)

    @override
    def create_reader(self, context: SourceReaderContext) -> HybridSourceReader:
        from connector_base.hybrid.source_reader import HybridSourceReader

        return HybridSourceReader(self, context)

    @property
    @override
    def split_serializer(self) -> VersionedSerializer[HybridSourceSplit]:
        return HybridSourceSplitSerializer([self.child(i).split_serializer for i in range(len(self.stages))])

    @property
    @override
    def enumerator_checkpoint_serializer(self) -> VersionedSerializer[HybridEnumeratorState]:
        from connector_base.hybrid.enumerator import HybridEnumeratorStateSerializer

        return HybridEnumeratorStateSerializer()

    @override
    def describe(self) -> dict[str, Any]:
        return {
            "source": "hybrid",
            "stages": [s.name for s in self.stages],
            "switch": self.switch_start.kind.value,
        }
