"""Each connector refuses an offset written for another source (issue 17 §3), without a broker."""

from __future__ import annotations

import pytest

from connector_base.spark.restore_check import SourceChangedError, SupportsRestoreCheck
from connectors.files.enumerator import FileEnumeratorState
from connectors.files.restore_check import check_files_restore, path_selects
from connectors.kafka.enumerator import KafkaEnumeratorState
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.planner import KafkaSplitPlanner
from connectors.kafka.restore_check import check_kafka_restore
from connectors.kafka.split import KafkaPartitionSplit
from connectors.kinesis.options import KinesisOptions
from connectors.kinesis.positions import PositionKind, ShardPosition
from connectors.kinesis.restore_check import check_kinesis_restore
from connectors.kinesis.split import KinesisShardSplit
from connectors.pravega.enumerator import PravegaEnumeratorState
from connectors.pravega.options import PravegaSourceOptions
from connectors.pravega.restore_check import check_pravega_restore
from connectors.pravega.split import PravegaSegmentSplit
from connectors.sequence.restore_check import check_sequence_restore

KAFKA = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def _kafka(**options: str) -> KafkaSourceOptions:
    return KafkaSourceOptions.parse({**KAFKA, **options}, streaming=True)


def test_kafka_planner_supports_the_check() -> None:
    assert isinstance(KafkaSplitPlanner(_kafka(subscribe="a")), SupportsRestoreCheck)


@pytest.mark.parametrize(
    ("options", "shown"),
    [
        ({"subscribe": "b"}, "subscribe=b"),
        ({"subscribePattern": "b.*"}, "subscribePattern=b.*"),
        ({"assign": '{"a":[1]}'}, 'assign={"a":[1]}'),
    ],
)
def test_kafka_another_subscription_fails_naming_old_and_new(options: dict[str, str], shown: str) -> None:
    splits = {"a-0": KafkaPartitionSplit("a", 0, 5)}
    with pytest.raises(SourceChangedError) as info:
        check_kafka_restore(_kafka(**options), KafkaEnumeratorState(frozenset({("a", 0)}), True), splits)
    assert "a-0" in str(info.value) and shown in str(info.value)


def test_kafka_same_or_wider_subscription_passes_and_fail_on_data_loss_false_drops() -> None:
    state = KafkaEnumeratorState(frozenset({("a", 0), ("a", 1)}), True)
    splits = {"a-0": KafkaPartitionSplit("a", 0, 5), "a-1": KafkaPartitionSplit("a", 1, 5)}
    assert check_kafka_restore(_kafka(subscribe="a,b"), state, splits) == set()
    assert check_kafka_restore(_kafka(subscribePattern="a|c"), state, splits) == set()
    dropped = check_kafka_restore(_kafka(assign='{"a":[0]}', failOnDataLoss="false"), state, splits)
    assert dropped == {"a-1"}


def test_kinesis_another_stream_fails() -> None:
    start = ShardPosition(PositionKind.TRIM_HORIZON)
    splits = {"shardId-0": KinesisShardSplit("orders", "shardId-0", start)}
    assert (
        check_kinesis_restore(KinesisOptions.parse({"streamName": "orders", "region": "x"}), splits) == set()
    )
    with pytest.raises(SourceChangedError, match="orders.*streamName=payments"):
        check_kinesis_restore(KinesisOptions.parse({"streamName": "payments", "region": "x"}), splits)


def test_pravega_another_stream_fails() -> None:
    opts = PravegaSourceOptions.parse(
        {"controller": "tcp://127.0.0.1:9090", "scope": "s", "stream": "b"}, True
    )
    splits = {"x": PravegaSegmentSplit("s", "a", 0, 0)}
    with pytest.raises(SourceChangedError, match="s/a.*stream=s/b"):
        check_pravega_restore(opts, PravegaEnumeratorState(), splits)
    assert (
        check_pravega_restore(opts, PravegaEnumeratorState(), {"y": PravegaSegmentSplit("s", "b", 0, 0)})
        == set()
    )


def test_files_another_path_fails_and_the_same_location_passes(tmp_path) -> None:
    state = FileEnumeratorState([f"{tmp_path}/in/a.jsonl"], [])
    assert check_files_restore(str(tmp_path / "in"), state.processed) == set()
    assert check_files_restore(f"file://{tmp_path}/in/*.jsonl", state.processed) == set()
    assert path_selects(f"{tmp_path}/in/a.jsonl", f"{tmp_path}/in/a.jsonl")
    with pytest.raises(SourceChangedError, match=f"path={tmp_path}/other"):
        check_files_restore(f"{tmp_path}/other", state.processed)
    with pytest.raises(SourceChangedError):
        check_files_restore(f"{tmp_path}/in/*.csv", state.processed)


def test_sequence_fewer_partitions_fails() -> None:
    assert check_sequence_restore(2, [0, 1]) == set()
    with pytest.raises(SourceChangedError, match="partition 2.*partitions=2"):
        check_sequence_restore(2, [0, 1, 2])
