"""The tutorial followed literally: a SQLite outbox source passes the connector test kit."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from connector_base.testing import SourceTestContext, SourceTestSuite
from unit_tests.tutorial_outbox.outbox_source import (
    OutboxDataSource,
    OutboxOptions,
    OutboxSource,
    OutboxSplit,
    connect,
)

GOLDEN = Path(__file__).with_name("golden")
TABLES = ("outbox_a", "outbox_b")


class OutboxTestContext(SourceTestContext):
    spark_format = "sqlite-outbox"
    max_records_option = "maxRecordsPerTrigger"

    def __init__(self, path: Path) -> None:
        self.path = str(path)
        self._conn = connect(self.path)
        self._tables = list(TABLES)
        for table in self._tables:
            self._create(table)

    def _create(self, table: str) -> None:
        self._conn.execute(f'CREATE TABLE "{table}" (id INTEGER PRIMARY KEY AUTOINCREMENT, payload TEXT)')

    def _insert(self, table: str, count: int) -> list[Any]:
        rows = []
        self._conn.execute("BEGIN")
        for i in range(count):
            (row_id,) = self._conn.execute(
                f'INSERT INTO "{table}" (payload) VALUES (?) RETURNING id', (f"{table}-{i}",)
            ).fetchone()
            rows.append((table, row_id, f"{table}-{i}"))
        self._conn.execute("COMMIT")
        return rows

    def create_source(self, continuous: bool) -> OutboxSource:
        return OutboxSource(OutboxOptions(self.path), bounded=not continuous)

    def write_records(self, count: int) -> list[Any]:
        per_table, rest = divmod(count, len(self._tables))
        written = []
        for i, table in enumerate(self._tables):
            written += self._insert(table, per_table + (1 if i < rest else 0))
        return written

    def add_split(self, count: int) -> list[Any]:
        table = f"outbox_{len(self._tables)}"
        self._create(table)
        self._tables.append(table)
        return self._insert(table, count)

    def spark_options(self, continuous: bool) -> dict[str, str]:
        return {"path": self.path}

    def invalid_options(self) -> list[tuple[dict[str, str], str]]:
        return [
            ({"path": "/nonexistent/outbox.db"}, "'path'"),
            ({"path": self.path, "maxRecordsPerTrigger": "0"}, "'maxRecordsPerTrigger'"),
        ]

    def split_golden_files(self) -> dict[str, Any]:
        return {str(GOLDEN / "outbox_split_v1.json"): OutboxSplit("outbox_a", 7, 42)}

    def close(self) -> None:
        self._conn.close()


class TestOutboxConnector(SourceTestSuite):
    @pytest.fixture
    def source_context(self, tmp_path: Path, spark: Any) -> Iterator[OutboxTestContext]:
        spark.dataSource.register(OutboxDataSource)
        ctx = OutboxTestContext(tmp_path / "outbox.db")
        yield ctx
        ctx.close()


def test_golden_file_is_what_version_1_writes() -> None:
    from unit_tests.tutorial_outbox.outbox_source import OutboxSplitSerializer

    data = json.loads((GOLDEN / "outbox_split_v1.json").read_text())
    assert data == OutboxSplitSerializer().serialize(OutboxSplit("outbox_a", 7, 42))
    assert sqlite3.sqlite_version_info >= (3, 35)  # INSERT ... RETURNING
