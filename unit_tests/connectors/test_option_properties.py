"""Property-based option checks for every connector (issue 17 §3), without a Spark session.

For each connector, hypothesis builds option maps from a valid base plus valid optional settings
and, for the invalid ones, one bad setting: a known option with a bad value, or an unknown option
(a misspelling, another vendor's name) whose value may be a secret. ``schema()`` is what Spark
calls at ``load()`` without a user schema, and it is plain Python: every invalid map must raise
``InvalidOptionError`` naming the bad option and never echo the secret; every valid map must give a
source and a planner. One Spark-level check per connector is in
integration_tests/connector_base/test_options_at_load.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.datasource import CaseInsensitiveDict

from connector_base import InvalidOptionError
from connector_base.spark import SourceDataSource
from connectors.files.datasource import FilesDataSource
from connectors.kafka.datasource import KafkaDataSource
from connectors.kinesis.datasource import KinesisDataSource
from connectors.pravega.datasource import PravegaDataSource
from connectors.sequence.datasource import SequenceDataSource

SECRETS = (
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AKIAIOSFODNN7EXAMPLE",
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="Pa55-w0rd!x";',
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "https://user:Pa55-w0rd!x@vault.example.com/v1",
)
SECRET_PARTS = ("wJalrXUtnFEMI", "AKIAIOSFODNN7EXAMPLE", "Pa55-w0rd!x", "dozjgNryP4J3")
SECRET_MARK = "Zq9#"
"""Starts every generated secret: no option name or error text holds it."""
SECRET_NAMES = ("awsSecretKey", "passwd", "sasl.jaas.config", "apiKey", "token", "sasl.password", "secret")

POSITIVE = st.integers(1, 10**9).map(str)
BOOL = st.sampled_from(["true", "false", "TRUE", "False", " true "])
NOT_POSITIVE = st.sampled_from(["0", "-1", "abc", "", "1.5", "ten"])
NOT_BOOL = st.sampled_from(["yes", "1", "on", "", "truthy"])


@dataclass
class Spec:
    """How to build valid and invalid option maps for one connector."""

    data_source: type[SourceDataSource]
    base: Callable[[Path], dict[str, str]]
    valid: dict[str, st.SearchStrategy[str]]
    invalid: dict[str, st.SearchStrategy[str]]
    known: set[str] = field(default_factory=set)


def _files_base(tmp: Path) -> dict[str, str]:
    (tmp / "a.jsonl").write_text('{"id": 1}\n')
    return {"format": "jsonl", "path": str(tmp)}


SPECS: dict[str, Spec] = {
    "kafka": Spec(
        KafkaDataSource,
        lambda _t: {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "orders"},
        {
            "maxOffsetsPerTrigger": POSITIVE,
            "minPartitions": POSITIVE,
            "consumeBatchSize": POSITIVE,
            "failOnDataLoss": BOOL,
            "includeHeaders": BOOL,
            "startingOffsets": st.just("earliest"),
            "groupIdPrefix": st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True),
            "kafka.client.id": st.from_regex(r"[a-z]{1,8}", fullmatch=True),
        },
        {
            "maxOffsetsPerTrigger": NOT_POSITIVE,
            "minPartitions": NOT_POSITIVE,
            "failOnDataLoss": NOT_BOOL,
            "startingOffsets": st.sampled_from(["earliest-ish", "first", "{not json"]),
            "subscribePattern": st.just("(unclosed"),
        },
    ),
    "kinesis": Spec(
        KinesisDataSource,
        lambda _t: {"streamName": "orders", "region": "us-east-1"},
        {
            "maxRecordsPerTrigger": POSITIVE,
            "maxBytesPerTrigger": POSITIVE,
            "failOnDataLoss": BOOL,
            "deaggregate": BOOL,
            "startingPosition": st.sampled_from(["TRIM_HORIZON", "LATEST", "trim_horizon"]),
        },
        {
            "maxRecordsPerTrigger": NOT_POSITIVE,
            "failOnDataLoss": NOT_BOOL,
            "startingPosition": st.sampled_from(["EARLIEST", "beginning", ""]),
            "streamARN": st.sampled_from(["orders", "arn:aws:s3:::bucket"]),
        },
    ),
    "pravega": Spec(
        PravegaDataSource,
        lambda _t: {"controller": "tcp://127.0.0.1:9090", "scope": "s", "stream": "orders"},
        {
            "maxEventsPerTrigger": POSITIVE,
            "maxBytesPerTrigger": POSITIVE,
            "failOnDataLoss": BOOL,
            "mode": st.sampled_from(["segments", "SEGMENTS"]),
        },
        {
            "maxEventsPerTrigger": NOT_POSITIVE,
            "failOnDataLoss": NOT_BOOL,
            "mode": st.sampled_from(["segment", "groups", ""]),
        },
    ),
    "files": Spec(
        FilesDataSource,
        _files_base,
        {
            "maxFilesPerTrigger": POSITIVE,
            "maxBytesPerTrigger": POSITIVE,
            "recursive": BOOL,
            "continuous": BOOL,
            "mode": st.sampled_from(["FAILFAST", "dropmalformed", "Permissive"]),
        },
        {
            "maxFilesPerTrigger": NOT_POSITIVE,
            "recursive": NOT_BOOL,
            "mode": st.sampled_from(["LENIENT", "drop", ""]),
            "format": st.sampled_from(["json", "xml", ""]),
        },
    ),
    "sequence": Spec(
        SequenceDataSource,
        lambda _t: {},
        {"partitions": st.integers(1, 64).map(str), "rowsPerPartition": POSITIVE, "continuous": BOOL},
        {"partitions": NOT_POSITIVE, "continuous": NOT_BOOL},
    ),
}

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _data_source(spec: Spec, options: Mapping[str, str]) -> SourceDataSource:
    return spec.data_source(CaseInsensitiveDict(dict(options)))


@st.composite
def _valid(draw: st.DrawFn, spec: Spec) -> dict[str, str]:
    names = draw(st.sets(st.sampled_from(sorted(spec.valid))))
    return {name: draw(spec.valid[name]) for name in names}


@st.composite
def _invalid(draw: st.DrawFn, spec: Spec) -> tuple[dict[str, str], str, str | None]:
    """(options, the bad option's name, the secret it carries or None)."""
    options = draw(_valid(spec))
    kind = draw(st.sampled_from(["bad value", "secret name", "secret value"]))
    if kind == "bad value":
        name = draw(st.sampled_from(sorted(spec.invalid)))
        options[name] = draw(spec.invalid[name])
        return options, name, None
    if kind == "secret name":
        name = draw(st.sampled_from(SECRET_NAMES))
        # a marker first: a bare drawn text ("maxB") can be part of what the message rightly says
        secret = SECRET_MARK + draw(
            st.text(st.characters(codec="ascii", exclude_categories=["Cc"]), min_size=0, max_size=30)
        )
        options[name] = secret
        return options, name, secret
    name = draw(st.from_regex(r"(starting|max|fail|stream|kafka)[A-Z][a-z]{2,8}z", fullmatch=True))
    secret = draw(st.sampled_from(SECRETS))
    options[name] = secret
    return options, name, secret


def _leaks(message: str, secret: str | None) -> bool:
    if secret is None:
        return False
    return secret.strip() in message if len(secret.strip()) >= 4 else False


@pytest.mark.parametrize("connector", sorted(SPECS))
def test_valid_option_maps_pass_load_and_plan(connector: str, tmp_path: Path) -> None:
    spec = SPECS[connector]
    base = spec.base(tmp_path)

    @FAST
    @given(_valid(spec))
    def check(extra: dict[str, str]) -> None:
        ds = _data_source(spec, {**base, **extra})
        schema = ds.schema()
        source = ds.create_source(schema, streaming=True)
        assert ds.create_planner(source) is not None

    check()


@pytest.mark.parametrize("connector", sorted(SPECS))
def test_invalid_option_maps_fail_at_load_naming_the_option_without_secrets(
    connector: str, tmp_path: Path
) -> None:
    spec = SPECS[connector]
    base = spec.base(tmp_path)

    @FAST
    @given(_invalid(spec))
    def check(case: tuple[dict[str, str], str, str | None]) -> None:
        extra, name, secret = case
        with pytest.raises(InvalidOptionError) as info:
            _data_source(spec, {**base, **extra}).schema()
        message = str(info.value)
        assert name.lower() in message.lower(), message
        assert not _leaks(message, secret), message
        assert not any(part in message for part in SECRET_PARTS), message
        assert not _leaks(repr(info.value.value), secret)

    check()
