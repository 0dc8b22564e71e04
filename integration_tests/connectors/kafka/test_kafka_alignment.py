"""Watermark alignment of Kafka partitions in the local runtime, on the session's reference broker.

Two partitions hold records whose timestamps are 10 s apart; with a 1 s drift, the partition ahead
is paused (unassigned from the consumer) until the other catches up, and every record still comes
out exactly once. Small produce batches and fetches make the two partitions arrive interleaved.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

import pytest

from connector_base import SourceReaderContext
from connector_base.event_time import WatermarkStrategy
from connector_base.runtime import LocalRuntime
from connectors.kafka import KafkaSource, KafkaSourceOptions
from connectors.kafka.source import KafkaSourceReader
from sparkflow_testing.kafka.broker import KafkaBroker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

ROWS = 2_000
STEP_MS = 10
SKEW_MS = 10_000
DRIFT_MS = 1_000
CONSUME_BATCH = 50
IN_FLIGHT_FETCHES = 4
"""Fetches already made when a pause lands: queue capacity 2, one pending, one being made."""


class RecordingKafkaReader(KafkaSourceReader):
    """Notes, on the reader thread, each split's next offset whenever alignment pauses or resumes."""

    calls: list[tuple[list[str], list[str], dict[str, int]]]

    def pause_or_resume_splits(self, splits_to_pause: Sequence[str], splits_to_resume: Sequence[str]) -> None:
        at = {sid: st.next_offset for sid, st in self.split_states.items()}
        self.calls.append((list(splits_to_pause), list(splits_to_resume), at))
        super().pause_or_resume_splits(splits_to_pause, splits_to_resume)


class RecordingKafkaSource(KafkaSource):
    def __init__(self, options: KafkaSourceOptions) -> None:
        super().__init__(options)
        self.readers: list[RecordingKafkaReader] = []

    def create_reader(self, context: SourceReaderContext) -> RecordingKafkaReader:
        reader = RecordingKafkaReader(*self.reader_parts(), context)  # kafka.reader's split reader
        reader.calls = []
        self.readers.append(reader)
        return reader


def test_the_partition_ahead_in_event_time_waits_and_nothing_is_lost(reference_broker: KafkaBroker) -> None:
    broker = reference_broker
    topic = broker.create_topic(2)
    base = int(time.time() * 1000) - 3_600_000
    for partition, offset_ms in ((0, 0), (1, SKEW_MS)):
        broker.produce(
            topic,
            [f"p{partition}-{i}".encode() for i in range(ROWS)],
            partition=partition,
            timestamps=[base + offset_ms + i * STEP_MS for i in range(ROWS)],
            **{"batch.num.messages": 25, "linger.ms": 0},
        )
    options = KafkaSourceOptions.parse(
        {
            "kafka.bootstrap.servers": broker.bootstrap,
            "subscribe": topic,
            "startingOffsets": "earliest",
            "consumeBatchSize": str(CONSUME_BATCH),
            # fetch responses of about one 25-record batch per partition: the partitions interleave
            # as they are consumed, instead of one whole partition arriving before the other
            "kafka.max.partition.fetch.bytes": "1024",
        },
        streaming=False,
    )
    source = RecordingKafkaSource(options)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_watermark_alignment(
        "kafka", DRIFT_MS, update_interval=20
    )
    with LocalRuntime(source, watermark_strategy=strategy, auto_watermark_interval_ms=10) as runtime:
        runtime.start()
        rows = runtime.wait_finished(timeout=120)

    counts = Counter((r[3], r[4]) for r in rows)  # (partition, offset)
    assert len(counts) == 2 * ROWS and set(counts.values()) == {1}
    (reader,) = source.readers
    ahead, behind = f"{topic}-1", f"{topic}-0"
    calls = reader.calls
    assert calls and calls[0][:2] == ([ahead], []), calls[:3]  # the partition ahead pauses first
    paused_at = calls[0][2]
    resumed_at = next(at for _, resume, at in calls if ahead in resume)
    slack_rows = IN_FLIGHT_FETCHES * CONSUME_BATCH
    assert resumed_at[ahead] - paused_at[ahead] <= slack_rows, (paused_at, resumed_at)
    for _, resume, at in calls:
        for sid in resume:
            other = behind if sid == ahead else ahead
            if other in at:  # resumed only within the drift of the other partition (plus what was in flight)
                skew = {ahead: SKEW_MS, behind: 0}
                spread = (skew[sid] + at[sid] * STEP_MS) - (skew[other] + at[other] * STEP_MS)
                assert spread <= DRIFT_MS + slack_rows * STEP_MS, (sid, at)
