"""``KinesisShardEnumerator``: discovers shards with ListShards and assigns them, parents first.

The shards that exist when a query starts begin at the resolved ``startingPosition``; shards that
appear later (children of a split or merge) begin at ``TRIM_HORIZON``. In bounded mode every split
gets its end cut here, on the driver (see ``bounded_cut``); in continuous mode the Spark planner
chooses the end of every micro-batch and the split has no end.

A child is read only after all its parents are finished: the Spark planner holds a child's range
empty while a parent is still in the plan (``KinesisSplitPlanner``); the enumerator hands shards out
in topological order.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from typing_extensions import override

from connector_base import ConnectorError, SplitEnumerator, SplitEnumeratorContext
from connector_base.serialization import FunctionSerializer
from connectors.kinesis.options import KinesisOptions
from connectors.kinesis.positions import ShardPosition
from connectors.kinesis.shard_discovery import StreamSnapshot, list_stream, wait_for_service_time
from connectors.kinesis.split import KinesisShardSplit

__all__ = ["KinesisEnumeratorState", "KinesisShardEnumerator", "ENUMERATOR_STATE_SERIALIZER", "bounded_cut"]

LOG = logging.getLogger(__name__)

SERVICE_CLOCK_RESOLUTION_MS = 1000
"""The ``Date`` header has whole seconds."""


@dataclass(frozen=True, slots=True)
class KinesisEnumeratorState:
    """The enumerator's checkpoint: shards already handed out, and whether the first discovery ran."""

    assigned: tuple[str, ...] = ()
    initial_discovery_done: bool = False


ENUMERATOR_STATE_SERIALIZER: FunctionSerializer[KinesisEnumeratorState] = FunctionSerializer(
    1,
    lambda s: {"assigned": sorted(s.assigned), "initialDone": s.initial_discovery_done},
    lambda d: KinesisEnumeratorState(tuple(str(x) for x in d["assigned"]), bool(d["initialDone"])),
)
"""Version 1: ``{"assigned": [shard id, ...], "initialDone": bool}``."""


def bounded_cut(options: KinesisOptions, snapshot: StreamSnapshot) -> int:
    """The end cut of a bounded read: after every record that arrived before ``snapshot`` was taken.

    The service's clock said ``now`` (whole seconds, rounded down), so every record that had arrived
    has a timestamp below ``now + 1 s``. Waiting until the service's clock passes that cut plus the
    safety margin makes every record before the cut visible, and every later record is after it.
    """
    cut = snapshot.service_now_ms + SERVICE_CLOCK_RESOLUTION_MS
    if options.ending_timestamp_ms is not None:
        cut = min(cut, options.ending_timestamp_ms)
    wait_for_service_time(options, cut + options.safety_margin_ms)
    return cut


class KinesisShardEnumerator(SplitEnumerator[KinesisShardSplit, KinesisEnumeratorState]):
    """Discovery every ``shardDiscoveryIntervalMs`` (once in bounded mode) through ``context.call_async``.

    Threading: every method runs on the coordinator thread; ListShards runs in ``call_async``.
    """

    def __init__(
        self,
        context: SplitEnumeratorContext[KinesisShardSplit],
        options: KinesisOptions,
        bounded: bool,
        state: KinesisEnumeratorState | None = None,
    ) -> None:
        self._context = context
        self._options = options
        self._bounded = bounded
        state = state or KinesisEnumeratorState()
        self._assigned = set(state.assigned)
        self._initial_done = state.initial_discovery_done
        self._pending: list[KinesisShardSplit] = []
        self._returned: dict[int, list[KinesisShardSplit]] = {}
        self._no_more = False

    @override
    def start(self) -> None:
        if self._bounded and self._initial_done:
            self._no_more = True
            return
        period = None if self._bounded else self._options.shard_discovery_interval_ms / 1000
        self._context.call_async(self._discover, self._on_discovered, 0.0, period)

    def _discover(self) -> tuple[StreamSnapshot, int | None]:
        snapshot = list_stream(self._options)
        cut = bounded_cut(self._options, snapshot) if self._bounded else None
        return snapshot, cut

    def _on_discovered(
        self, result: tuple[StreamSnapshot, int | None] | None, error: BaseException | None
    ) -> None:
        if error is not None or result is None:
            if not self._initial_done:
                if "ResourceNotFoundException" in str(error):
                    option = "streamARN" if self._options.stream_arn else "streamName"
                    raise ConnectorError(
                        f"stream {self._options.stream} (option {option}) does not exist at the "
                        f"endpoint in region {self._options.region}: create it, or name an existing "
                        f"stream ({error})"
                    ) from error
                raise ConnectorError(
                    f"shard discovery of stream {self._options.stream} failed: {error}"
                ) from error
            LOG.warning(
                "shard discovery of stream %s failed, retrying later: %s", self._options.stream, error
            )
            return
        snapshot, cut = result
        initial = not self._initial_done
        # a shard that ListShards no longer lists has expired and will never come back
        self._assigned &= {s.shard_id for s in snapshot.shards} | {s.shard_id for s in self._pending}
        start_initial = self._options.starting_position.resolve(snapshot.service_now_ms)
        for shard in snapshot.shards:
            if shard.shard_id in self._assigned:
                continue
            start = start_initial if initial else ShardPosition.trim_horizon()
            end = None
            if cut is not None:
                end = (
                    ShardPosition.shard_end()
                    if shard.closed and self._options.ending_timestamp_ms is None
                    else (ShardPosition.at_timestamp(cut))
                )
            self._pending.append(
                KinesisShardSplit(
                    self._options.stream, shard.shard_id, start, end, shard.parent_shard_ids, shard.closed
                )
            )
            self._assigned.add(shard.shard_id)
        self._initial_done = True
        if self._bounded:
            self._no_more = True
        self._assign()

    def _assign(self) -> None:
        readers = sorted(self._context.registered_readers())
        if not readers:
            return
        assignment: dict[int, list[KinesisShardSplit]] = {}
        for split in self._pending:
            reader = readers[zlib.crc32(split.shard_id.encode()) % len(readers)]
            assignment.setdefault(reader, []).append(split)
        self._pending = []
        for subtask in readers:  # splits returned by a failed reader go to that reader only
            if subtask in self._returned:
                assignment.setdefault(subtask, []).extend(self._returned.pop(subtask))
        if assignment:
            self._context.assign_splits(assignment)
        if self._no_more:
            for r in readers:
                if r not in self._returned:
                    self._context.signal_no_more_splits(r)

    @override
    def add_reader(self, subtask_id: int) -> None:
        self._assign()

    @override
    def handle_split_request(self, subtask_id: int, requester_hostname: str | None = None) -> None:
        self._assign()

    def add_splits_back(self, splits: Sequence[KinesisShardSplit], subtask_id: int) -> None:
        """Splits of a failed reader, as of its last checkpoint: they go back to that reader when it
        registers again, never to another reader that may have finished already."""
        self._returned.setdefault(subtask_id, []).extend(splits)
        self._assign()

    @override
    def snapshot_state(self, checkpoint_id: int) -> KinesisEnumeratorState:
        pending = {s.shard_id for s in self._pending}
        return KinesisEnumeratorState(tuple(sorted(self._assigned - pending)), self._initial_done)
