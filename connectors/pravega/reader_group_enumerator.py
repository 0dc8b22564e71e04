"""``PravegaReaderGroupEnumerator``: creates or resumes the reader group, one split per reader.

The reader group balances segments between its readers (including successors after a scale),
so the enumerator only makes sure the group exists and hands reader ``i`` to subtask ``i``.

Threading: the coordinator thread; the group is created through ``call_async``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from connector_base import SplitEnumerator, SplitEnumeratorContext
from connector_base.serialization import FunctionSerializer
from connectors.pravega.official_client import official_manager
from connectors.pravega.options import PravegaSourceOptions
from connectors.pravega.reader_group_split import PravegaReaderGroupSplit

__all__ = ["READER_GROUP_STATE_SERIALIZER", "PravegaReaderGroupEnumerator", "open_reader_group"]

LOG = logging.getLogger(__name__)


def open_reader_group(options: PravegaSourceOptions) -> tuple[object, object]:
    """Create the reader group, or join it when it exists (official client, blocking).

    Returns ``(manager, group)``: keep the manager alive as long as the group (it owns the runtime).
    """
    import pravega_client

    from connectors.pravega.positions import CutKind

    (scope, stream), group = options.streams[0], options.reader_group
    manager = official_manager(options.connection)
    config = pravega_client.StreamReaderGroupConfig(options.start.kind is CutKind.LATEST, scope, stream)
    return manager, manager.create_reader_group_with_config(group, scope, config)


class PravegaReaderGroupEnumerator(SplitEnumerator[PravegaReaderGroupSplit, list[int]]):
    """See the module docstring; the state is the reader indexes handed out."""

    def __init__(
        self,
        context: SplitEnumeratorContext[PravegaReaderGroupSplit],
        options: PravegaSourceOptions,
        assigned: Sequence[int] = (),
    ) -> None:
        self._context = context
        self._options = options
        self._assigned = set(assigned)
        self._ready = False
        self._pending: list[PravegaReaderGroupSplit] = []

    def start(self) -> None:  # noqa: D102
        self._context.call_async(lambda: open_reader_group(self._options), self._on_open)

    def _on_open(self, _opened: object, error: BaseException | None) -> None:
        if error is not None:
            raise error
        self._ready = True
        (scope, stream), group = self._options.streams[0], self._options.reader_group
        assert group is not None
        self._pending = [
            PravegaReaderGroupSplit(scope, stream, group, i)
            for i in range(self._context.current_parallelism())
        ]
        LOG.info("reader group %s/%s ready for %d readers", scope, group, len(self._pending))
        self._assign()

    def _assign(self) -> None:
        if not self._ready:
            return
        readers = set(self._context.registered_readers())
        for split in list(self._pending):
            if split.reader_index in readers:
                self._pending.remove(split)
                self._assigned.add(split.reader_index)
                self._context.assign_split(split, split.reader_index)

    def add_reader(self, subtask_id: int) -> None:  # noqa: D102
        self._assign()

    def handle_split_request(self, subtask_id: int, requester_hostname: str | None = None) -> None:  # noqa: D102
        self._assign()

    def add_splits_back(self, splits: Sequence[PravegaReaderGroupSplit], subtask_id: int) -> None:  # noqa: D102
        self._pending.extend(splits)
        self._assign()

    def snapshot_state(self, checkpoint_id: int) -> list[int]:  # noqa: D102
        return sorted(self._assigned)


READER_GROUP_STATE_SERIALIZER: FunctionSerializer[list[int]] = FunctionSerializer(
    1, lambda assigned: {"assigned": list(assigned)}, lambda d: [int(i) for i in d["assigned"]]
)
"""Version 1: ``{"assigned": [reader index, ...]}``."""
