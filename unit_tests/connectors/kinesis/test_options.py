from __future__ import annotations

import pytest

from connector_base import InvalidOptionError
from connectors.kinesis.options import KinesisOptions
from connectors.kinesis.positions import StartingPositionKind

BASE = {"streamName": "s", "region": "us-east-1"}


def test_defaults() -> None:
    opts = KinesisOptions.parse(BASE)
    assert opts.stream == "s"
    assert opts.stream_args() == {"StreamName": "s"}
    assert opts.starting_position.kind is StartingPositionKind.LATEST
    assert opts.max_records_per_fetch == 10_000
    assert opts.fail_on_data_loss is True
    assert opts.deaggregate is False


def test_option_names_are_case_insensitive_and_parsed() -> None:
    opts = KinesisOptions.parse(
        {
            "STREAMNAME": "s",
            "Region": "eu-west-1",
            "startingposition": "at_timestamp",
            "startingTimestamp": "2024-05-01T12:00:00Z",
            "endingTimestamp": "1714568400500",
            "maxTimeWindowPerTrigger": "15s",
            "maxRecordsPerTrigger": "10",
            "maxBytesPerTrigger": "100",
            "failOnDataLoss": "FALSE",
            "deaggregate": "true",
            "maxRecordsPerFetch": "500",
        }
    )
    assert opts.starting_position.timestamp_ms == 1714564800000
    assert opts.ending_timestamp_ms == 1714568400500
    assert opts.max_time_window_per_trigger_ms == 15_000
    assert (opts.max_records_per_trigger, opts.max_bytes_per_trigger) == (10, 100)
    assert opts.fail_on_data_loss is False and opts.deaggregate is True
    assert opts.max_records_per_fetch == 500


def test_stream_arn_gives_name_and_region() -> None:
    arn = "arn:aws:kinesis:eu-central-1:123456789012:stream/orders"
    opts = KinesisOptions.parse({"streamARN": arn})
    assert opts.stream == "orders"
    assert opts.region == "eu-central-1"
    assert opts.stream_args() == {"StreamARN": arn}


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"region": "us-east-1"}, "'streamName'"),
        ({**BASE, "startingPosition": "EARLIEST"}, "'startingPosition'"),
        ({**BASE, "startingPosition": "AT_TIMESTAMP"}, "'startingTimestamp'"),
        ({**BASE, "startingTimestamp": "5"}, "'startingTimestamp'"),
        (
            {**BASE, "startingPosition": "AT_TIMESTAMP", "startingTimestamp": "yesterday"},
            "'startingTimestamp'",
        ),
        ({**BASE, "maxRecordsPerFetch": "20000"}, "'maxRecordsPerFetch'"),
        ({**BASE, "maxRecordsPerTrigger": "0"}, "'maxRecordsPerTrigger'"),
        ({**BASE, "maxTimeWindowPerTrigger": "soon"}, "'maxTimeWindowPerTrigger'"),
        ({**BASE, "failOnDataLoss": "maybe"}, "'failOnDataLoss'"),
        ({**BASE, "shardDiscoveryIntervalMs": "-1"}, "'shardDiscoveryIntervalMs'"),
        ({**BASE, "endpointUrl": "localhost:4566"}, "'endpointUrl'"),
        ({**BASE, "awsAccessKeyId": "AKIA"}, "'awsSecretAccessKey'"),
        ({**BASE, "roleArn": "reader"}, "'roleArn'"),
        ({**BASE, "streamARN": "orders"}, "'streamARN'"),
        ({**BASE, "colour": "red"}, "'colour'"),
        (
            {
                **BASE,
                "startingPosition": "AT_TIMESTAMP",
                "startingTimestamp": "2000",
                "endingTimestamp": "1000",
            },
            "'endingTimestamp'",
        ),
    ],
)
def test_invalid_options_name_option_value_and_what_is_valid(options: dict[str, str], fragment: str) -> None:
    with pytest.raises(InvalidOptionError) as info:
        KinesisOptions.parse(options)
    assert fragment in str(info.value)
    assert "expected" in str(info.value)


def test_missing_region_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    with pytest.raises(InvalidOptionError, match="'region'"):
        KinesisOptions.parse({"streamName": "s"})


def test_secrets_never_in_repr_or_errors() -> None:
    secret, token = "wJalrXUtnFEMI/K7MDENG/SECRET", "FQoGZXIvYXdzEXAMPLETOKEN"
    opts = KinesisOptions.parse(
        {**BASE, "awsAccessKeyId": "AKIAEXAMPLE", "awsSecretAccessKey": secret, "sessionToken": token}
    )
    assert secret not in repr(opts) and token not in repr(opts)
    assert "AKIAEXAMPLE" in repr(opts)
    with pytest.raises(InvalidOptionError) as info:
        KinesisOptions.parse({**BASE, "awsSecretAccessKey": secret, "sessionToken": token, "colour": "x"})
    assert secret not in str(info.value) and token not in str(info.value)
    with pytest.raises(InvalidOptionError) as info:
        KinesisOptions.parse({**BASE, "awssecretaccesskey": secret})
    assert secret not in str(info.value)
