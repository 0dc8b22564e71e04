"""``HybridSource``: several sources read one after the other (Flink's HybridSource on FLIP-27).

Every stage but the last is bounded. The enumerator runs the child enumerators in turn and switches
when the current one has handed out all its splits and (streaming) the planner has seen each of
them read to its end; the next stage then starts where the ``SwitchStart`` says.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import override

from connector_base.enumerator import SplitEnumeratorContext
from connector_base.hybrid.enumerator import (
    HybridEnumeratorState,
    HybridEnumeratorStateSerializer,
    HybridSplitEnumerator,
)
from connector_base.hybrid.source_reader import HybridSourceReader
from connector_base.hybrid.split import HybridSourceSplit, HybridSourceSplitSerializer
from connector_base.hybrid.stages import HybridStages
from connector_base.serialization import VersionedSerializer
from connector_base.source import Boundedness, Source
from connector_base.source_reader import SourceReaderContext

__all__ = ["HybridSource"]


class HybridSource(HybridStages, Source[Any, HybridSourceSplit, HybridEnumeratorState]):
    """Reads ``stages`` in order, every row conformed to ``schema`` (see :class:`HybridStages`)."""

    @property
    @override
    def boundedness(self) -> Boundedness:
        return self.child(len(self.stages) - 1).boundedness

    @override
    def create_enumerator(self, context: SplitEnumeratorContext[HybridSourceSplit]) -> HybridSplitEnumerator:
        return HybridSplitEnumerator(self, context, None)

    @override
    def restore_enumerator(
        self, context: SplitEnumeratorContext[HybridSourceSplit], checkpoint: HybridEnumeratorState
    ) -> HybridSplitEnumerator:
        return HybridSplitEnumerator(self, context, checkpoint)

    @override
    def create_reader(self, context: SourceReaderContext) -> HybridSourceReader:
        return HybridSourceReader(self, context)

    @property
    @override
    def split_serializer(self) -> VersionedSerializer[HybridSourceSplit]:
        return HybridSourceSplitSerializer([self.child(i).split_serializer for i in range(len(self.stages))])

    @property
    @override
    def enumerator_checkpoint_serializer(self) -> VersionedSerializer[HybridEnumeratorState]:
        return HybridEnumeratorStateSerializer()

    @override
    def describe(self) -> dict[str, Any]:
        return {
            "source": "hybrid",
            "stages": [s.name for s in self.stages],
            "switch": self.switch_start.kind.value,
        }
