"""Secrets are redacted from option errors by name and by value shape, for any option name."""

from __future__ import annotations

import pytest

from connector_base import InvalidOptionError
from connector_base.redaction import REDACTED, is_secret_name, looks_like_secret, redact_text

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="hunter2";'


@pytest.mark.parametrize(
    "name",
    ["awsSecretKey", "passwd", "sasl.jaas.config", "kafka.ssl.key.password", "auth_token", "apiKey", "pwd"],
)
def test_secret_names_hide_any_value(name: str) -> None:
    assert is_secret_name(name)
    error = InvalidOptionError(name, "hunter2", "something else")
    assert "hunter2" not in str(error) and REDACTED in str(error)
    assert error.value == REDACTED


@pytest.mark.parametrize(
    ("value", "secret"),
    [
        (AWS_SECRET, AWS_SECRET),
        (JAAS, "hunter2"),
        ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("https://bob:hunter2@host/path", "hunter2"),
        ('{"password": "hunter2", "user": "u"}', "hunter2"),
        (
            "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
            "MIIEvQ",
        ),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "eyJhbGci"),
    ],
)
def test_secret_shaped_values_are_hidden_under_innocent_names(value: str, secret: str) -> None:
    assert looks_like_secret(value)
    error = InvalidOptionError("startingPostion", value, f"one of the options; nested: {value}")
    assert secret not in str(error)
    assert secret not in repr(error.value)


@pytest.mark.parametrize(
    "value",
    [
        "orders_2024_EventsStream",
        "/tmp/pytest-of-root/pytest-12/test_DropMalformed0/input/*.csv",
        "s3://bucket/path/File_2024_ABC123xyz.csv",
        "arn:aws:kinesis:us-east-1:123456789012:stream/name",
        'JSON such as {"topicA":{"0":23,"1":-2}}',
        "tcp://127.0.0.1:9090",
        "EARLIEST",
    ],
)
def test_ordinary_values_are_shown(value: str) -> None:
    assert redact_text(value) == value
    assert repr(value) in str(InvalidOptionError("someOption", value, "x"))
