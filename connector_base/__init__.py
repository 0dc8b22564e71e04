"""connector_base: Apache Flink's FLIP-27 source architecture, in Python, running on Spark.

The API (``Source``, ``SplitEnumerator``, ``SourceReader``) and the reader machinery
(``SourceReaderBase`` with ``SplitReader``s on fetcher threads, a bounded hand-off queue and a
``RecordEmitter``). The Spark bridge is in ``connector_base.spark``, the local runtime in
``connector_base.runtime`` and the connector test kit in ``connector_base.testing``.
"""

from connector_base.enumerator import ReaderInfo, SplitEnumerator, SplitEnumeratorContext
from connector_base.errors import (
    ConnectorError,
    DataLossError,
    InvalidOptionError,
    MalformedRecordError,
    ReaderFailedError,
    SerializationError,
    UnsupportedOperationError,
)
from connector_base.range_query_split_reader import RangeQuerySplitReader
from connector_base.record_emitter import RecordEmitter
from connector_base.records_with_split_ids import RecordsBySplits, RecordsWithSplitIds
from connector_base.serialization import FunctionSerializer, ListSerializer, VersionedSerializer
from connector_base.source import Boundedness, Source
from connector_base.source_output import EventTimeReaderOutput, SourceOutput
from connector_base.source_reader import InputStatus, ReaderOutput, SourceReader, SourceReaderContext
from connector_base.source_reader_base import (
    BatchEmitter,
    SingleThreadMultiplexSourceReaderBase,
    SourceReaderBase,
)
from connector_base.split import MutableSplitState, SourceSplit
from connector_base.split_reader import SplitReader, SplitsAddition, SplitsChange, SplitsRemoval

__all__ = [
    "BatchEmitter",
    "Boundedness",
    "ConnectorError",
    "DataLossError",
    "EventTimeReaderOutput",
    "FunctionSerializer",
    "InputStatus",
    "InvalidOptionError",
    "ListSerializer",
    "MalformedRecordError",
    "MutableSplitState",
    "RangeQuerySplitReader",
    "ReaderFailedError",
    "ReaderInfo",
    "ReaderOutput",
    "RecordEmitter",
    "RecordsBySplits",
    "RecordsWithSplitIds",
    "SerializationError",
    "SingleThreadMultiplexSourceReaderBase",
    "Source",
    "SourceReader",
    "SourceReaderBase",
    "SourceOutput",
    "SourceReaderContext",
    "SourceSplit",
    "SplitEnumerator",
    "SplitEnumeratorContext",
    "SplitReader",
    "SplitsAddition",
    "SplitsChange",
    "SplitsRemoval",
    "UnsupportedOperationError",
    "VersionedSerializer",
]
