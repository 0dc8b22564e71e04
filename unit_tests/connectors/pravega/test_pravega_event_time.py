"""``EventTimeExtractor``: event times of Pravega payloads for the cut (JSON field, int64 prefix)."""

from __future__ import annotations

import json

import pytest

from connector_base import InvalidOptionError, MalformedRecordError
from connectors.pravega.event_time import EventTimeEncoding, EventTimeExtractor, parse_encoding

JSON = EventTimeExtractor(EventTimeEncoding.JSON, "ts")
INT64 = EventTimeExtractor(EventTimeEncoding.INT64)


@pytest.mark.parametrize(
    "value, ms",
    [
        (1_700_000_000_123, 1_700_000_000_123),
        (1_700_000_000_123.9, 1_700_000_000_123),
        ("2023-11-14T22:13:20.123Z", 1_700_000_000_123),
        ("2023-11-14T23:13:20.123+01:00", 1_700_000_000_123),
        ("2023-11-14T22:13:20.123", 1_700_000_000_123),  # no zone: UTC
        (-1, -1),
    ],
)
def test_a_json_field_holds_epoch_ms_or_an_iso_time(value: object, ms: int) -> None:
    assert JSON.time_of(json.dumps({"ts": value, "x": 1}).encode(), "segment s", 0) == ms


def test_an_int64_prefix_is_big_endian_epoch_ms() -> None:
    payload = (1_700_000_000_123).to_bytes(8, "big", signed=True) + b"rest"
    assert INT64.time_of(payload, "segment s", 0) == 1_700_000_000_123
    assert INT64.time_of((-5).to_bytes(8, "big", signed=True), "segment s", 0) == -5


@pytest.mark.parametrize(
    "extractor, payload, why",
    [
        (JSON, b"not json", "it is not JSON"),
        (JSON, b'{"other": 1}', "no top-level field 'ts'"),
        (JSON, b'[{"ts": 1}]', "no top-level field 'ts'"),
        (JSON, b'{"ts": true}', "is a boolean"),
        (JSON, b'{"ts": "yesterday"}', "'yesterday'"),
        (JSON, b'{"ts": null}', "None"),
        (INT64, b"1234567", "fewer than 8"),
    ],
)
def test_an_event_without_a_time_fails_naming_where_and_what_is_expected(
    extractor: EventTimeExtractor, payload: bytes, why: str
) -> None:
    with pytest.raises(MalformedRecordError, match=why) as info:
        extractor.time_of(payload, "segment sc/st/0.#epoch.0", 4242)
    message = str(info.value)
    assert "segment sc/st/0.#epoch.0" in message and "offset 4242" in message
    assert ("eventTime.column" if extractor is JSON else "eventTime.encoding=int64") in message


def test_options_are_checked_when_the_extractor_is_built() -> None:
    assert parse_encoding({}) is EventTimeEncoding.JSON
    assert parse_encoding({"EVENTTIME.ENCODING": " Int64 "}) is EventTimeEncoding.INT64
    with pytest.raises(InvalidOptionError, match="option 'eventTime.encoding'"):
        parse_encoding({"eventTime.encoding": "avro"})
    with pytest.raises(InvalidOptionError, match="option 'eventTime.alignment'.*eventTime.column"):
        EventTimeExtractor(EventTimeEncoding.JSON)
    with pytest.raises(InvalidOptionError, match="option 'eventTime.column'"):
        EventTimeExtractor(EventTimeEncoding.INT64, "ts")
