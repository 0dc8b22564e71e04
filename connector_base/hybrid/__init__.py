"""A hybrid source: several FLIP-27 sources read one after the other (Flink's ``HybridSource``).

The usual case is history from files, then live records from Kafka. Every stage but the last is
bounded; the enumerator runs the child enumerators in turn and switches when a stage is done; the
next stage starts where a ``SwitchStart`` says (derived from the previous stage's maximum event
time, a timestamp, or its own options). Splits are the children's, tagged with their stage; the
Spark planner delegates to the stage's planner. See docs/backlog-and-hybrid.md.
"""

from connector_base.hybrid.enumerator import (
    HybridEnumeratorState,
    HybridEnumeratorStateSerializer,
    HybridSplitEnumerator,
)
from connector_base.hybrid.planner import HybridSplitPlanner
from connector_base.hybrid.source import HybridSource
from connector_base.hybrid.source_reader import HybridSourceReader
from connector_base.hybrid.split import HybridSourceSplit, HybridSourceSplitSerializer
from connector_base.hybrid.stage import HybridStage, conform_batch, conformance_problems
from connector_base.hybrid.stages import DriverSwitchState, HybridStages
from connector_base.hybrid.switch_start import SwitchStart, SwitchStartKind

__all__ = [
    "DriverSwitchState",
    "HybridEnumeratorState",
    "HybridEnumeratorStateSerializer",
    "HybridSource",
    "HybridSourceReader",
    "HybridSourceSplit",
    "HybridSourceSplitSerializer",
    "HybridSplitEnumerator",
    "HybridSplitPlanner",
    "HybridStage",
    "HybridStages",
    "SwitchStart",
    "SwitchStartKind",
    "conform_batch",
    "conformance_problems",
]
