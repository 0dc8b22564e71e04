"""files-unified passes the connector test kit (local runtime and Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from connector_base.testing import SourceTestContext, SourceTestSuite
from connectors.files import FileSource, FileSourceSplit, SplitKind
from connectors.files.split_reader import CHUNK_BYTES_CONFIG
from integration_tests.connectors.files.conftest import write_jsonl
from unit_tests.connectors.files.helpers_files import make_source

SCHEMA = StructType([StructField("id", LongType()), StructField("name", StringType())])
FILES_PER_WRITE = 6
GOLDEN = Path(__file__).parents[3] / "unit_tests" / "connectors" / "files" / "golden"


class FilesTestContext(SourceTestContext):
    spark_format = "files-unified"
    supports_new_splits = True
    max_records_option = "maxFilesPerTrigger"
    # reads of 400 bytes: a 1500-byte split takes several fetches, so a mid-split snapshot exists
    reader_config = {CHUNK_BYTES_CONFIG: 400}

    def __init__(self, root: Path) -> None:
        self.root = root
        self.next_id = 0
        self.next_file = 0
        self.largest_file = 1

    def _options(self, continuous: bool) -> dict[str, str]:
        return {
            "path": str(self.root),
            "format": "jsonl",
            "continuous": str(continuous).lower(),
            "discoveryIntervalMs": "200",
            "splitSizeBytes": "1500",
        }

    def create_source(self, continuous: bool) -> FileSource:
        return make_source(self._options(continuous), SCHEMA)

    def _file(self, count: int) -> list[Any]:
        records = [{"id": self.next_id + i, "name": f"r{self.next_id + i}"} for i in range(count)]
        self.next_id += count
        self.largest_file = max(self.largest_file, count)
        write_jsonl(self.root, f"part-{self.next_file:04d}.jsonl", records)
        self.next_file += 1
        return [(r["id"], r["name"]) for r in records]

    def write_records(self, count: int) -> list[Any]:
        out: list[Any] = []
        for i in range(FILES_PER_WRITE):
            out += self._file(count // FILES_PER_WRITE + (1 if i < count % FILES_PER_WRITE else 0))
        return out

    def add_split(self, count: int) -> list[Any]:
        return self._file(count)

    def spark_options(self, continuous: bool) -> dict[str, str]:
        return {**self._options(continuous), "maxFilesPerTrigger": "2"}

    def max_records_value(self, records: int) -> str:
        return str(max(1, records // self.largest_file))  # a trigger's files hold at most `records`

    def split_golden_files(self) -> dict[str, Any]:
        split = FileSourceSplit(
            "/data/in/part-0001.jsonl", 33554432, 1048576, 40000000, 1763769600000, SplitKind.LINES, 33600000
        )
        return {str(GOLDEN / "file_source_split_v1.json"): split}

    def invalid_options(self) -> list[tuple[dict[str, str], str]]:
        root = str(self.root)
        return [
            ({"format": "jsonl"}, "'path'"),
            ({"path": root, "format": "xml"}, "'format'"),
            ({"path": root + "/missing", "format": "jsonl"}, "'path'"),
            ({"path": root, "format": "jsonl", "splitSizeBytes": "0"}, "'splitSizeBytes'"),
            ({"path": root, "format": "jsonl", "mode": "LAX"}, "'mode'"),
            ({"path": root, "format": "jsonl", "colour": "red"}, "'colour'"),
        ]


class TestFilesConnector(SourceTestSuite):
    @pytest.fixture
    def source_context(self, tmp_path: Path) -> FilesTestContext:
        return FilesTestContext(tmp_path / "kit")
