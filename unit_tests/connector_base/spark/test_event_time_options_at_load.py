"""``eventTime.*`` options at ``load()`` (``schema()``), for every format: no broker is contacted."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql.datasource import CaseInsensitiveDict

from connector_base import InvalidOptionError
from connectors.files.datasource import FilesDataSource
from connectors.kafka.datasource import KafkaDataSource
from connectors.kinesis.datasource import KinesisDataSource
from connectors.pravega.datasource import PravegaDataSource
from connectors.sequence.datasource import SequenceDataSource

KAFKA = {"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}
# continuous: a glob matching nothing yet is valid (a bounded read fails at load(), as Spark does)
FILES = {"path": "/nonexistent-dir/*.parquet", "format": "parquet", "continuous": "true"}
KINESIS = {"streamName": "s", "region": "us-east-1"}
PRAVEGA = {"controller": "tcp://127.0.0.1:9090", "scope": "sc", "stream": "s"}
WITHOUT_LOOKUPS: list[tuple[Any, dict[str, str]]] = [(SequenceDataSource, {})]
EVERY_FORMAT = [
    (FilesDataSource, FILES),
    (KinesisDataSource, KINESIS),
    (PravegaDataSource, PRAVEGA),
    *WITHOUT_LOOKUPS,
]


def _ds(cls: Any, options: dict[str, str]) -> Any:
    return cls(CaseInsensitiveDict(options))  # as Spark builds it


@pytest.mark.parametrize("cls, options", WITHOUT_LOOKUPS, ids=lambda v: getattr(v, "__name__", ""))
def test_formats_without_lookups_refuse_the_cut_naming_the_option(cls: Any, options: dict[str, str]) -> None:
    with pytest.raises(
        InvalidOptionError, match="option 'eventTime.alignment': expected off: format"
    ) as info:
        _ds(cls, {**options, "eventTime.alignment": "cut"}).schema()
    assert "no event-time lookups" in str(info.value)


@pytest.mark.parametrize("cls, options", EVERY_FORMAT, ids=lambda v: getattr(v, "__name__", ""))
def test_off_is_accepted_everywhere_and_never_reaches_the_connector(
    cls: Any, options: dict[str, str]
) -> None:
    ds = _ds(cls, {**options, "eventTime.alignment": "off", "eventTime.idleTimeout": "5s"})
    try:
        ds.schema()
    except InvalidOptionError as e:  # a connector's own option may fail here, never an eventTime one
        assert "eventTime" not in e.option and "alignment" not in e.option
    assert not any(k.lower().startswith(("eventtime.", "alignment.")) for k in ds.options)


def test_kafka_accepts_the_cut_on_record_timestamps() -> None:
    ds = _ds(KafkaDataSource, {**KAFKA, "eventTime.alignment": "cut", "eventTime.column": "timestamp"})
    ds.schema()
    assert ds.event_time_options().cut


@pytest.mark.parametrize(
    "extra, option",
    [
        ({"eventTime.alignment": "cut", "eventTime.column": "value"}, "eventTime.alignment"),
        ({"eventTime.alignment": "on"}, "eventTime.alignment"),
        ({"alignment.maxDrift": "1 hour"}, "alignment.maxDrift"),
        ({"eventTime.failOnLateSplit": "1"}, "eventTime.failOnLateSplit"),
    ],
)
def test_kafka_bad_event_time_options_fail_at_load(extra: dict[str, str], option: str) -> None:
    with pytest.raises(InvalidOptionError, match=f"option '{option}'"):
        _ds(KafkaDataSource, {**KAFKA, **extra}).schema()


def test_kinesis_accepts_the_cut_on_arrival_times_only() -> None:
    for column in ({}, {"eventTime.column": "approximateArrivalTimestamp"}):
        ds = _ds(KinesisDataSource, {**KINESIS, "eventTime.alignment": "cut", **column})
        ds.schema()
        assert ds.event_time_options().cut
    with pytest.raises(InvalidOptionError, match="option 'eventTime.alignment'.*approximateArrivalTimestamp"):
        _ds(KinesisDataSource, {**KINESIS, "eventTime.alignment": "cut", "eventTime.column": "data"}).schema()


def test_files_accept_the_cut_on_a_parquet_column_only() -> None:
    ds = _ds(FilesDataSource, {**FILES, "eventTime.alignment": "cut", "eventTime.column": "ts"})
    assert ds.event_time_options().cut and ds.event_time_options().column == "ts"
    for options, named in (
        ({**FILES, "format": "csv", "eventTime.column": "ts"}, "Parquet row-group statistics"),
        (FILES, "set eventTime.column"),
    ):
        with pytest.raises(InvalidOptionError, match=f"option 'eventTime.alignment'.*{named}"):
            _ds(FilesDataSource, {**options, "eventTime.alignment": "cut"})


def test_pravega_accepts_the_cut_with_a_json_field_or_an_int64_prefix() -> None:
    ds = _ds(PravegaDataSource, {**PRAVEGA, "eventTime.alignment": "cut", "eventTime.column": "ts"})
    ds.schema()
    assert ds.event_time_options().column == "ts"
    ds = _ds(PravegaDataSource, {**PRAVEGA, "eventTime.alignment": "cut", "eventTime.encoding": "INT64"})
    ds.schema()
    assert ds.event_time_options().cut


@pytest.mark.parametrize(
    "extra, option, named",
    [
        ({"eventTime.alignment": "cut"}, "eventTime.alignment", "eventTime.column names the top-level field"),
        (
            {"eventTime.alignment": "cut", "eventTime.column": "ts", "eventTime.encoding": "avro"},
            "eventTime.encoding",
            "json .* or int64",
        ),
        ({"eventTime.encoding": "avro"}, "eventTime.encoding", "json .* or int64"),
        (
            {"eventTime.alignment": "cut", "eventTime.column": "ts", "eventTime.encoding": "int64"},
            "eventTime.column",
            "no value with eventTime.encoding=int64",
        ),
    ],
)
def test_pravega_bad_event_time_options_fail_at_load(extra: dict[str, str], option: str, named: str) -> None:
    with pytest.raises(InvalidOptionError, match=f"option '{option}': expected .*{named}"):
        _ds(PravegaDataSource, {**PRAVEGA, **extra}).schema()
