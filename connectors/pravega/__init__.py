"""``pravega``: Pravega streams as a FLIP-27 source on Spark, and a Pravega sink.

Spark reads by **segment ranges** (``PravegaSegmentSplit``), as Pravega's JVM Spark connector does
with its batch client: the driver resolves stream cuts into byte offsets per segment, plans
``[start, end)`` per segment for each micro-batch, and executors read exactly those bytes from the
segment store over the wire protocol and decode the events into Arrow batches. Successor segments
are read only after all their predecessors, so the order per routing key holds across scaling.
A replayed micro-batch reads the same bytes: exactly-once with an idempotent or transactional sink.
With ``eventTime.alignment=cut`` the driver reads each event's time from its payload (a JSON field
or an int64 prefix, ``EventTimeExtractor``) within one batch's window, to admit by event time.

Reader-group splits (``PravegaReaderGroupSource``, the FLIP-27 mapping: a split is a reader with its
segments' positions, the checkpoint is the group's stream cut) run in the local runtime only.
The sink writes through the official client, optionally in one transaction per task that the
driver commits. See docs/pravega.md.
"""

from connectors.pravega.datasource import PRAVEGA_SCHEMA, PravegaDataSource
from connectors.pravega.enumerator import PravegaEnumeratorState, PravegaSegmentEnumerator
from connectors.pravega.event_time import EventTimeEncoding, EventTimeExtractor
from connectors.pravega.options import PravegaSinkOptions, PravegaSourceOptions, ReadMode
from connectors.pravega.planner import PravegaSegmentPlanner
from connectors.pravega.positions import StreamCutSpec, format_stream_cut, parse_stream_cut
from connectors.pravega.reader_group_source import PravegaReaderGroupSource
from connectors.pravega.reader_group_split import PravegaReaderGroupSplit
from connectors.pravega.source import PravegaSource, PravegaSourceReader
from connectors.pravega.split import (
    PravegaSegmentSplit,
    PravegaSegmentSplitSerializer,
    PravegaSegmentSplitState,
)
from connectors.pravega.split_reader import PravegaSegmentSplitReader

__all__ = [
    "PRAVEGA_SCHEMA",
    "EventTimeEncoding",
    "EventTimeExtractor",
    "PravegaDataSource",
    "PravegaEnumeratorState",
    "PravegaReaderGroupSource",
    "PravegaReaderGroupSplit",
    "PravegaSegmentEnumerator",
    "PravegaSegmentPlanner",
    "PravegaSegmentSplit",
    "PravegaSegmentSplitReader",
    "PravegaSegmentSplitSerializer",
    "PravegaSegmentSplitState",
    "PravegaSinkOptions",
    "PravegaSource",
    "PravegaSourceOptions",
    "PravegaSourceReader",
    "ReadMode",
    "StreamCutSpec",
    "format_stream_cut",
    "parse_stream_cut",
]
