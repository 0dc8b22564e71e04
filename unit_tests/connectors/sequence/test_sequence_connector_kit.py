"""The worked example connector passes the connector test kit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connector_base.testing import SourceTestContext, SourceTestSuite
from connectors.sequence import SequenceOptions, SequenceSource, SequenceSplit
from connectors.sequence.split_reader import FETCH_BATCH_CONFIG

PARTITIONS = 3
GOLDEN = Path(__file__).parents[2] / "connector_base" / "golden"


class SequenceTestContext(SourceTestContext):
    spark_format = "sequence-unified"
    supports_new_splits = False
    new_splits_gap = "a sequence has the fixed number of partitions its `partitions` option names"
    max_records_gap = (
        "a sequence's rows cannot be appended: a bounded split ends at the rowsPerPartition it was "
        "planned with (a restarted stream keeps it), a continuous one grows with the clock"
    )
    reader_config = {FETCH_BATCH_CONFIG: 64}  # several fetches per split: a mid-split snapshot exists

    def __init__(self) -> None:
        self.rows = 0

    def create_source(self, continuous: bool) -> SequenceSource:
        return SequenceSource(SequenceOptions(partitions=PARTITIONS, rows_per_partition=self.rows))

    def write_records(self, count: int) -> list[Any]:
        first, self.rows = self.rows, self.rows + count // PARTITIONS
        return [(p, i, f"{p}-{i}") for p in range(PARTITIONS) for i in range(first, self.rows)]

    def spark_options(self, continuous: bool) -> dict[str, str]:
        return {
            "partitions": str(PARTITIONS),
            "rowsPerPartition": str(self.rows),
            "maxRecordsPerTrigger": "250",
        }

    def split_golden_files(self) -> dict[str, Any]:
        return {str(GOLDEN / "sequence_split_v1.json"): SequenceSplit(3, 17, 100)}

    def invalid_options(self) -> list[tuple[dict[str, str], str]]:
        return [
            ({"partitions": "zero"}, "'partitions'"),
            ({"rowsPerPartition": "-1"}, "'rowsPerPartition'"),
            ({"continuous": "maybe"}, "'continuous'"),
            ({"colour": "red"}, "'colour'"),
        ]


class TestSequenceConnector(SourceTestSuite):
    @pytest.fixture
    def source_context(self) -> SequenceTestContext:
        return SequenceTestContext()
