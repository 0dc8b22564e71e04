"""files-unified passes the connector test kit (local runtime and Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from connector_base.testing import SourceTestContext, SourceTestSuite
from connectors.files import FileSource
from integration_tests.connectors.files.conftest import write_jsonl
from unit_tests.connectors.files.helpers_files import make_source

SCHEMA = StructType([StructField("id", LongType()), StructField("name", StringType())])
FILES_PER_WRITE = 6


class FilesTestContext(SourceTestContext):
    spark_format = "files-unified"
    supports_new_splits = True

    def __init__(self, root: Path) -> None:
        self.root = root
        self.next_id = 0
        self.next_file = 0

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
