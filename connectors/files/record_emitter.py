"""``FileRecordEmitter``: hands whole Arrow tables to the output and moves the split position."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from typing_extensions import override

from connector_base import BatchEmitter
from connector_base.source_output import SourceOutput
from connectors.files.split import FileSourceSplitState
from connectors.files.split_reader import FileChunk


class FileRecordEmitter(BatchEmitter[FileChunk, Any, FileSourceSplitState]):
    """One element is a table of many rows (never one row): it goes out with ``collect_batch``.

    Files carry no event time of their own: no timestamps are passed, so event time comes from
    the strategy's timestamp assigner (``ColumnTimestampAssigner`` over a column of the table).
    """

    @override
    def emit_record(
        self, element: FileChunk, output: SourceOutput[Any], split_state: FileSourceSplitState
    ) -> None:
        table, position = element
        if table is not None and table.num_rows:
            output.collect_batch(table)
        if position is not None:
            split_state.position = position

    @override
    def emit_records(
        self, elements: Iterable[FileChunk], output: SourceOutput[Any], split_state: FileSourceSplitState
    ) -> None:
        for element in elements:
            self.emit_record(element, output, split_state)
