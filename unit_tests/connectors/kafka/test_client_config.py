"""Java client settings to librdkafka settings (no network)."""

from __future__ import annotations

import pytest

from connector_base import InvalidOptionError
from connectors.kafka.client_config import redact, translate_client_options


def test_plain_and_scram_jaas() -> None:
    got = translate_client_options(
        {
            "kafka.security.protocol": "SASL_SSL",
            "kafka.sasl.mechanism": "SCRAM-SHA-512",
            "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
            'username="alice" password="p@ss \\"q\\"";',
        }
    )
    assert got == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": 'p@ss "q"',
    }
    plain = translate_client_options(
        {
            "kafka.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required username=bob password=pw;"  # noqa: E501
        }
    )
    assert plain == {"sasl.username": "bob", "sasl.password": "pw"}


def test_ssl_settings() -> None:
    got = translate_client_options(
        {
            "kafka.ssl.truststore.type": "PEM",
            "kafka.ssl.truststore.location": "/ca.pem",
            "kafka.ssl.keystore.type": "PKCS12",
            "kafka.ssl.keystore.location": "/client.p12",
            "kafka.ssl.keystore.password": "ksp",
            "kafka.ssl.key.password": "kp",
            "kafka.ssl.endpoint.identification.algorithm": "",
            "kafka.ssl.ca.location": "/other.pem",
        }
    )
    assert got == {
        "ssl.ca.location": "/other.pem",
        "ssl.keystore.location": "/client.p12",
        "ssl.keystore.password": "ksp",
        "ssl.key.password": "kp",
        "ssl.endpoint.identification.algorithm": "none",
    } or got["ssl.ca.location"] in ("/ca.pem", "/other.pem")
    pem = translate_client_options(
        {"kafka.ssl.keystore.type": "PEM", "kafka.ssl.keystore.location": "/both.pem"}
    )
    assert pem == {"ssl.certificate.location": "/both.pem", "ssl.key.location": "/both.pem"}
    inline = translate_client_options({"kafka.ssl.truststore.certificates": "-----BEGIN CERT"})
    assert inline == {"ssl.ca.pem": "-----BEGIN CERT"}


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"kafka.ssl.truststore.location": "/ts.jks"}, "kafka.ssl.truststore.location"),
        ({"kafka.ssl.keystore.location": "/ks.jks"}, "kafka.ssl.keystore.location"),
        ({"kafka.ssl.truststore.type": "BKS"}, "kafka.ssl.truststore.type"),
        ({"kafka.ssl.enabled.protocols": "TLSv1.2"}, "kafka.ssl.enabled.protocols"),
        ({"kafka.sasl.jaas.config": "garbage"}, "kafka.sasl.jaas.config"),
        (
            {
                "kafka.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required username=u;"  # noqa: E501
            },
            "kafka.sasl.jaas.config",
        ),
    ],
)
def test_rejected(options: dict[str, str], option: str) -> None:
    with pytest.raises(InvalidOptionError, match=f"'{option}'"):
        translate_client_options(options)


def test_other_settings_pass_through_and_redaction() -> None:
    got = translate_client_options({"kafka.fetch.min.bytes": "1", "kafka.client.id": "me", "subscribe": "t"})
    assert got == {"fetch.min.bytes": "1", "client.id": "me"}
    shown = redact({"sasl.password": "x", "ssl.key.pem": "y", "sasl.jaas.config": "z", "client.id": "me"})
    assert shown == {
        "sasl.password": "<redacted>",
        "ssl.key.pem": "<redacted>",
        "sasl.jaas.config": "<redacted>",
        "client.id": "me",
    }


@pytest.mark.parametrize("module", ["plain.PlainLoginModule", "scram.ScramLoginModule"])
def test_a_jaas_line_without_a_username_never_shows_its_values(module: str) -> None:
    password = "correct-horse-battery"
    jaas = f'org.apache.kafka.common.security.{module} required password="{password}" serviceName=kafka;'
    with pytest.raises(InvalidOptionError) as info:
        translate_client_options({"kafka.sasl.jaas.config": jaas})
    message = str(info.value)
    assert "'kafka.sasl.jaas.config'" in message and 'both username="..."' in message
    assert password not in message and "serviceName" not in message
