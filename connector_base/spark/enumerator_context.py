"""The enumerator context on the Spark driver: one virtual reader, discovery run when Spark plans."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from typing_extensions import override

from connector_base.enumerator import ReaderInfo, SplitEnumeratorContext
from connector_base.split import SourceSplit

__all__ = ["DriverEnumeratorContext"]

LOG = logging.getLogger(__name__)

SplitT = TypeVar("SplitT", bound=SourceSplit)
"""The split type."""

DRIVER_SUBTASK = 0


@dataclass
class _ScheduledCall:
    callable_: Callable[[], Any]
    handler: Callable[[Any, BaseException | None], None]
    due: float
    period_s: float | None


class DriverEnumeratorContext(SplitEnumeratorContext[SplitT]):
    """Collects the splits an enumerator assigns; runs its async calls synchronously when due.

    Spark plans micro-batches on one driver thread, so discovery runs inline at the start of
    ``latestOffset`` (``run_due``): the plan then sees a consistent set of splits, and no thread
    keeps running between micro-batches.

    Threading: single-threaded (the driver's stream-reader thread).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._assigned: list[SplitT] = []
        self._no_more_splits = False
        self._calls: list[_ScheduledCall] = []
        self._processing_backlog = False

    @override
    def current_parallelism(self) -> int:
        return 1

    @override
    def registered_readers(self) -> Mapping[int, ReaderInfo]:
        return {DRIVER_SUBTASK: ReaderInfo(DRIVER_SUBTASK, "spark-driver")}

    @override
    def assign_splits(self, assignment: Mapping[int, Sequence[SplitT]]) -> None:
        for splits in assignment.values():
            self._assigned.extend(splits)

    @override
    def signal_no_more_splits(self, subtask_id: int) -> None:
        self._no_more_splits = True

    @property
    def no_more_splits(self) -> bool:
        """Whether the enumerator said no more splits will come."""
        return self._no_more_splits

    @override
    def set_is_processing_backlog(self, is_processing_backlog: bool) -> None:
        if is_processing_backlog != self._processing_backlog:
            LOG.info("the enumerator reports %s", "backlog" if is_processing_backlog else "no backlog")
        self._processing_backlog = is_processing_backlog

    @property
    def processing_backlog(self) -> bool:
        """What the enumerator last said through ``set_is_processing_backlog`` (False until it does)."""
        return self._processing_backlog

    @override
    def call_async(
        self,
        callable_: Callable[[], Any],
        handler: Callable[[Any, BaseException | None], None],
        initial_delay_s: float = 0.0,
        period_s: float | None = None,
    ) -> None:
        self._calls.append(_ScheduledCall(callable_, handler, self._clock() + initial_delay_s, period_s))

    def run_due(self, force: bool = False) -> None:
        """Run the calls that are due (all scheduled calls once with ``force``)."""
        now = self._clock()
        for call in list(self._calls):
            if not force and call.due > now:
                continue
            try:
                result, error = call.callable_(), None
            except Exception as e:  # the handler decides (Flink passes the error to the handler)
                result, error = None, e
            call.handler(result, error)
            if call.period_s is None:
                self._calls.remove(call)
            else:
                call.due = now + call.period_s

    def take_assigned(self) -> list[SplitT]:
        """The splits assigned since the last call."""
        out, self._assigned = self._assigned, []
        return out
