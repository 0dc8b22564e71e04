"""``files-unified``: files under a directory or glob as a FLIP-27 source on Spark (batch and streaming).

Formats ``text``, ``jsonl`` and ``csv`` are row formats: a file is cut into byte ranges and a line
belongs to the range in which it starts (compressed files are read whole); ``parquet`` is a bulk format
split by row groups. Continuous mode discovers new files every ``discoveryIntervalMs``. The pieces:
``FileSourceSplit`` (split), ``FileSplitEnumerator``, ``FileSplitReader``, ``FileRecordEmitter``,
``FileSource`` with its Spark ``FilePlanner``, and the PySpark adapter ``FilesDataSource``.
Options are documented in docs/files.md.
"""

from connectors.files.datasource import FilesDataSource
from connectors.files.enumerator import (
    FileEnumeratorState,
    FileEnumeratorStateSerializer,
    FileSplitEnumerator,
)
from connectors.files.options import FileFormat, FileSourceOptions, ParseMode
from connectors.files.source import FilePlanner, FileSource
from connectors.files.split import FileSourceSplit, FileSourceSplitSerializer, FileSourceSplitState, SplitKind
from connectors.files.split_reader import FileSplitReader

__all__ = [
    "FileEnumeratorState",
    "FileEnumeratorStateSerializer",
    "FileFormat",
    "FilePlanner",
    "FileSource",
    "FileSourceOptions",
    "FileSourceSplit",
    "FileSourceSplitSerializer",
    "FileSourceSplitState",
    "FileSplitEnumerator",
    "FileSplitReader",
    "FilesDataSource",
    "ParseMode",
    "SplitKind",
]
