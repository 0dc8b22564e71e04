"""The bridge validates options per mode: ``load()`` accepts what either ``read`` or ``readStream``
accepts (Spark's ``schema()`` call does not say which), and each reader applies its own mode's rules."""

from __future__ import annotations

import pytest

from connector_base import InvalidOptionError
from connector_base.spark.failed_stream_reader import FailedStreamReader
from connectors.kafka.datasource import KafkaDataSource
from connectors.pravega.datasource import PravegaDataSource

KAFKA = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}
PRAVEGA = {"controller": "tcp://127.0.0.1:9090", "scope": "sc", "stream": "s"}


@pytest.mark.parametrize(
    "extra",
    [
        {"startingOffsets": "latest"},
        {"startingOffsets": "LATEST"},
        {"startingOffsets": '{"t":{"0":-1}}'},
    ],
)
def test_kafka_streaming_only_starting_offsets_pass_load_and_stream_reader(extra: dict[str, str]) -> None:
    ds = KafkaDataSource({**KAFKA, **extra})
    schema = ds.schema()
    # no broker is contacted before the query starts; a failure would come back as FailedStreamReader
    assert not isinstance(ds.streamReader(schema), FailedStreamReader)
    with pytest.raises(InvalidOptionError, match="startingOffsets"):
        ds.reader(schema)


def test_kafka_batch_only_ending_offsets_pass_load_and_batch_reader() -> None:
    ds = KafkaDataSource({**KAFKA, "endingOffsets": "latest"})
    schema = ds.schema()
    ds.reader(schema)
    failed = ds.streamReader(schema)  # raised by its first call, so Spark shows it last
    assert isinstance(failed, FailedStreamReader)
    with pytest.raises(InvalidOptionError, match="endingOffsets"):
        failed.initialOffset()


def test_options_invalid_in_both_modes_fail_at_load_with_both_reasons() -> None:
    ds = KafkaDataSource({**KAFKA, "startingOffsets": "latest", "endingOffsets": "latest"})
    with pytest.raises(InvalidOptionError) as e:
        ds.schema()
    assert "spark.readStream" in str(e.value) and "endingOffsets" in str(e.value)
    with pytest.raises(InvalidOptionError, match="startingOffsets"):
        KafkaDataSource({**KAFKA, "startingOffsets": "newest"}).schema()


def test_pravega_unbounded_end_is_for_read_stream() -> None:
    ds = PravegaDataSource({**PRAVEGA, "end_stream_cut": "unbounded"})
    schema = ds.schema()
    assert not isinstance(ds.streamReader(schema), FailedStreamReader)
    with pytest.raises(InvalidOptionError, match="end_stream_cut"):
        ds.reader(schema)
