"""Event time of Kinesis shards in the local runtime: arrival times, alignment and idleness.

Alignment: shard 1's records arrive ``SKEW_S`` after shard 0's, so by their
``ApproximateArrivalTimestamp`` (the emitter's timestamps, the default event time) shard 1 runs
ahead; with a smaller drift it is paused (not asked for records) until shard 0 is read to its end,
then resumed from its iterator, and every record comes out exactly once.

Idleness: a continuous read of a quiet shard goes idle once GetRecords says it is at the tip, and a
new record makes it active again.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

import pytest

from connector_base import SourceReaderContext
from connector_base.event_time import MAX_WATERMARK, WatermarkStrategy
from connector_base.runtime import LocalRuntime
from connectors.kinesis import KinesisOptions
from connectors.kinesis.record_emitter import KinesisRecordEmitter
from connectors.kinesis.source import KinesisSource, KinesisSourceReader
from connectors.kinesis.split_reader import KinesisShardSplitReader
from integration_tests.connectors.kinesis.helpers import options
from sparkflow_testing.kinesis.endpoint import KinesisEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

ROWS = 300
SKEW_S = 1.5
DRIFT_MS = 500
PAGE = 25
IDLE_TIMEOUT_MS = 300


class RecordingKinesisReader(KinesisSourceReader):
    """Notes every pause/resume alignment asks, with the records each split had emitted then."""

    calls: list[tuple[list[str], list[str]]]

    def pause_or_resume_splits(self, splits_to_pause: Sequence[str], splits_to_resume: Sequence[str]) -> None:
        self.calls.append((list(splits_to_pause), list(splits_to_resume)))
        super().pause_or_resume_splits(splits_to_pause, splits_to_resume)


class RecordingKinesisSource(KinesisSource):
    readers: list[RecordingKinesisReader]

    def create_reader(self, context: SourceReaderContext) -> RecordingKinesisReader:
        opts = self.options
        reader = RecordingKinesisReader(
            lambda: KinesisShardSplitReader(opts),
            KinesisRecordEmitter(opts.stream, opts.deaggregate),
            context,
        )
        reader.calls = []
        self.readers.append(reader)
        return reader


def _put(endpoint: KinesisEndpoint, stream: str, hash_key: str, tag: str, count: int) -> None:
    endpoint.put_records(
        stream, [(f"{tag}-{i}", f"{tag}-{i:05d}".encode()) for i in range(count)], [hash_key] * count
    )


def test_the_shard_ahead_by_arrival_time_waits_and_every_record_comes_once(
    kinesis_endpoint: KinesisEndpoint,
) -> None:
    endpoint = kinesis_endpoint
    stream = endpoint.create_stream(shards=2)
    endpoint.wait_active(stream)
    shards = sorted(endpoint.open_shards(stream), key=lambda s: int(s["HashKeyRange"]["StartingHashKey"]))
    behind, ahead = (s["HashKeyRange"]["StartingHashKey"] for s in shards)
    _put(endpoint, stream, behind, "behind", ROWS)
    time.sleep(SKEW_S)
    _put(endpoint, stream, ahead, "ahead", ROWS)

    opts = KinesisOptions.parse(options(endpoint, stream, maxRecordsPerFetch=str(PAGE)))
    source = RecordingKinesisSource(opts, bounded=True)
    source.readers = []
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_watermark_alignment(
        "kinesis", DRIFT_MS, update_interval=20
    )
    with LocalRuntime(source, watermark_strategy=strategy, auto_watermark_interval_ms=10) as runtime:
        runtime.start()
        rows = runtime.wait_finished(timeout=60)
        event_time = runtime.reader_event_time(0)
        assert event_time is not None and event_time.watermark == MAX_WATERMARK

    counts = Counter(bytes(r[0]) for r in rows)
    assert len(counts) == 2 * ROWS and set(counts.values()) == {1}
    ahead_shard, behind_shard = shards[1]["ShardId"], shards[0]["ShardId"]
    (reader,) = source.readers
    assert reader.calls, "alignment never paused the shard ahead"
    first_pause, _ = reader.calls[0]
    assert [s for s in first_pause if ahead_shard in s] and not [s for s in first_pause if behind_shard in s]
    assert any(ahead_shard in s for _, resume in reader.calls for s in resume), reader.calls


def test_a_quiet_shard_at_its_tip_goes_idle_and_a_new_record_wakes_it(
    kinesis_endpoint: KinesisEndpoint,
) -> None:
    endpoint = kinesis_endpoint
    stream = endpoint.create_stream(shards=1)
    endpoint.wait_active(stream)
    (shard,) = endpoint.open_shards(stream)
    hash_key = shard["HashKeyRange"]["StartingHashKey"]
    _put(endpoint, stream, hash_key, "first", 10)
    source = KinesisSource(KinesisOptions.parse(options(endpoint, stream)), bounded=False)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_idleness(IDLE_TIMEOUT_MS)
    with LocalRuntime(source, watermark_strategy=strategy, auto_watermark_interval_ms=20) as runtime:
        runtime.start()
        deadline = time.monotonic() + 20
        while runtime.record_count() < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert runtime.record_count() == 10
        event_time = runtime.reader_event_time(0)
        assert event_time is not None
        # (a reader with no split yet is idle too: only what follows the records counts)
        seen = len(event_time.history_snapshot())
        while "idle" not in event_time.history_snapshot()[seen:] and time.monotonic() < deadline:
            time.sleep(0.05)
        history = event_time.history_snapshot()[seen:]
        assert "idle" in history, f"a caught-up quiet shard never went idle: {history}"
        _put(endpoint, stream, hash_key, "second", 1)
        while time.monotonic() < deadline:
            history = event_time.history_snapshot()[seen:]
            if "active" in history[history.index("idle") + 1 :]:
                break
            time.sleep(0.05)
        assert "active" in history[history.index("idle") + 1 :], history
