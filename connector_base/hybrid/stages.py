"""``HybridStages``: what a hybrid source's enumerator, reader and planner read from it.

The ordered stages, the schema every row is conformed to, the switch rule, whether the query streams,
the child source of each stage and the :class:`DriverSwitchState` the enumerator and the planner share
on the driver. :class:`~connector_base.hybrid.source.HybridSource` is one; the enumerator, the reader
and the planner take this base, so they never import the source that creates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from connector_base.hybrid.stage import HybridStage
from connector_base.hybrid.switch_start import SwitchStart
from connector_base.source import Source

__all__ = ["DriverSwitchState", "HybridStages"]


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


class HybridStages:
    """The stages of a hybrid source read one after the other, every row conformed to ``schema``.

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
