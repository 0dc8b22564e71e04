"""``parquet``: read with ``pyarrow.parquet``, split by row groups (position: row-group index)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from connector_base import ConnectorError
from connectors.files.formats.base import ReadSchema

BATCH_ROWS = 131_072
"""Rows per batch out of a row group (large batches make the hand-off to Spark cheap)."""


def row_group_count(path: str) -> int:
    """How many row groups the file has (reads the footer; the enumerator handles a failure)."""
    return pq.ParquetFile(path).metadata.num_row_groups


def file_schema(path: str) -> pa.Schema:
    """The Arrow schema of a Parquet file (reads the footer); ``ConnectorError`` naming a corrupt file."""
    try:
        return pq.read_schema(path)
    except (pa.ArrowException, OSError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise ConnectorError(
            f"cannot read the footer of Parquet file {path}: {e} (corrupt or not Parquet)"
        ) from e


class ParquetRowGroupReader:
    """Reads row groups of one file as output batches; columns are matched by name (missing: null)."""

    def __init__(self, path: str, schema: ReadSchema, batch_rows: int = BATCH_ROWS) -> None:
        self.path = path
        self.batch_rows = batch_rows
        self.schema = schema
        self._file = pq.ParquetFile(path, memory_map=False, buffer_size=0)
        meta = self._file.metadata
        self.num_row_groups = meta.num_row_groups
        rows = [meta.row_group(i).num_rows for i in range(self.num_row_groups)]
        self._first_row = np.concatenate(([0], np.cumsum(rows, dtype=np.int64)))
        present = set(self._file.schema_arrow.names)
        self._columns = [n for n in schema.data.names if n in present]
        self._missing = [f for f in schema.data if f.name not in present]

    def read(self, row_group: int) -> Iterator[pa.Table]:
        """The output tables of one row group, in order."""
        first = int(self._first_row[row_group])
        for batch in self._file.iter_batches(
            batch_size=self.batch_rows, row_groups=[row_group], columns=self._columns, use_threads=True
        ):
            table = pa.Table.from_batches([batch])
            n = table.num_rows
            for f in self._missing:
                table = table.append_column(f.name, pa.nulls(n, f.type))
            offsets = np.arange(first, first + n, dtype=np.int64) if self.schema.with_offset else None
            first += n
            yield self.schema.assemble(table, self.path, offsets)

    def close(self) -> None:
        """Close the file."""
        self._file.close()
