"""Options of ``kinesis-unified``, parsed once into a frozen object.

Secrets (``awsSecretAccessKey``, ``sessionToken``) live in ``KinesisCredentials``, whose ``repr`` hides
them; they never reach logs, error messages or offsets.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from connector_base import InvalidOptionError
from connector_base.spark import parse_duration_ms, parse_positive_int
from connectors.kinesis.positions import StartingPosition, StartingPositionKind, parse_timestamp_ms

__all__ = ["KinesisCredentials", "KinesisOptions", "KNOWN_OPTIONS"]

MAX_GET_RECORDS_LIMIT = 10_000
"""The service's upper bound for GetRecords ``Limit``."""
DEFAULT_DISCOVERY_INTERVAL_MS = 10_000
DEFAULT_SAFETY_MARGIN_MS = 1_000
DEFAULT_NETWORK_TIMEOUT_MS = 120_000
"""How long read calls failing on the network are retried (``networkTimeoutMs``)."""
DEFAULT_READ_TIMEOUT_MS = 60_000
"""How long one call waits for an answer (``readTimeoutMs``)."""
SECRET_OPTIONS = frozenset({"awssecretaccesskey", "sessiontoken"})

KNOWN_OPTIONS = {
    "streamname": "streamName",
    "streamarn": "streamARN",
    "region": "region",
    "endpointurl": "endpointUrl",
    "awsaccesskeyid": "awsAccessKeyId",
    "awssecretaccesskey": "awsSecretAccessKey",
    "sessiontoken": "sessionToken",
    "rolearn": "roleArn",
    "rolesessionname": "roleSessionName",
    "startingposition": "startingPosition",
    "startingtimestamp": "startingTimestamp",
    "endingtimestamp": "endingTimestamp",
    "sharddiscoveryintervalms": "shardDiscoveryIntervalMs",
    "maxrecordsperfetch": "maxRecordsPerFetch",
    "maxrecordspertrigger": "maxRecordsPerTrigger",
    "maxbytespertrigger": "maxBytesPerTrigger",
    "maxtimewindowpertrigger": "maxTimeWindowPerTrigger",
    "failondataloss": "failOnDataLoss",
    "deaggregate": "deaggregate",
    "cutsafetymarginms": "cutSafetyMarginMs",
    "arrowbatchrows": "arrowBatchRows",
    "filterpushdown": "filterPushdown",
    "partitionkeycolumn": "partitionKeyColumn",
    "networktimeoutms": "networkTimeoutMs",
    "readtimeoutms": "readTimeoutMs",
    "path": "path",
    "checkpointlocation": "checkpointLocation",
}
"""Lower-cased option name -> its documented spelling."""


@dataclass(frozen=True, slots=True)
class KinesisCredentials:
    """Explicit credentials; empty fields mean "use the boto3 default chain"."""

    access_key_id: str | None = None
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    role_arn: str | None = None
    role_session_name: str = "kinesis-unified"

    def cache_key(self) -> tuple[Any, ...]:
        """A key for client pools (the secret is part of it, never printed)."""
        return (
            self.access_key_id,
            self.secret_access_key,
            self.session_token,
            self.role_arn,
            self.role_session_name,
        )


def _bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    raw = options.get(key.lower())
    if raw is None:
        return default
    if raw.strip().lower() not in ("true", "false"):
        raise InvalidOptionError(key, raw, "true or false")
    return raw.strip().lower() == "true"


def _int(options: Mapping[str, str], key: str, default: int, minimum: int, maximum: int | None = None) -> int:
    raw = options.get(key.lower())
    if raw is None:
        return default
    valid = f"an integer in [{minimum}, {maximum}]" if maximum is not None else f"an integer >= {minimum}"
    try:
        value = int(raw)
    except ValueError:
        raise InvalidOptionError(key, raw, valid) from None
    if value < minimum or (maximum is not None and value > maximum):
        raise InvalidOptionError(key, raw, valid)
    return value


@dataclass(frozen=True, slots=True)
class KinesisOptions:
    """The parsed options (see docs/kinesis.md for each one)."""

    stream_name: str | None
    stream_arn: str | None
    region: str
    endpoint_url: str | None = None
    credentials: KinesisCredentials = field(default_factory=KinesisCredentials)
    starting_position: StartingPosition = field(default_factory=StartingPosition.latest)
    ending_timestamp_ms: int | None = None
    shard_discovery_interval_ms: int = DEFAULT_DISCOVERY_INTERVAL_MS
    max_records_per_fetch: int = MAX_GET_RECORDS_LIMIT
    max_records_per_trigger: int | None = None
    max_bytes_per_trigger: int | None = None
    max_time_window_per_trigger_ms: int | None = None
    fail_on_data_loss: bool = True
    deaggregate: bool = False
    safety_margin_ms: int = DEFAULT_SAFETY_MARGIN_MS
    partition_key_column: str | None = None
    network_timeout_ms: int = DEFAULT_NETWORK_TIMEOUT_MS
    read_timeout_ms: int = DEFAULT_READ_TIMEOUT_MS

    @property
    def stream(self) -> str:
        """The stream's name, or its ARN when only the ARN was given (for messages and columns)."""
        return self.stream_name or self._name_from_arn()

    def _name_from_arn(self) -> str:
        assert self.stream_arn is not None
        return self.stream_arn.rsplit("/", 1)[-1]

    def stream_args(self) -> dict[str, str]:
        """``StreamName`` / ``StreamARN`` arguments of Kinesis API calls."""
        return {"StreamARN": self.stream_arn} if self.stream_arn else {"StreamName": str(self.stream_name)}

    def client_key(self) -> tuple[Any, ...]:
        """What identifies a client configuration (for per-process client pools)."""
        return (self.region, self.endpoint_url, self.credentials.cache_key())

    @classmethod
    def parse(cls, options: Mapping[str, str], for_sink: bool = False) -> KinesisOptions:
        """Parse and validate; ``InvalidOptionError`` names the option, the value and what is valid."""
        lowered: dict[str, str] = {}
        for key, value in options.items():
            if key.startswith("_"):
                continue
            if key.lower() not in KNOWN_OPTIONS:
                shown = "<hidden>" if key.lower() in SECRET_OPTIONS else value
                raise InvalidOptionError(key, shown, f"one of the options {sorted(KNOWN_OPTIONS.values())}")
            lowered[key.lower()] = value
        name = lowered.get("streamname")
        arn = lowered.get("streamarn")
        if not name and not arn:
            raise InvalidOptionError("streamName", None, "the stream's name (or option streamARN)")
        if arn is not None and not (arn.startswith("arn:") and ":kinesis:" in arn and "/" in arn):
            raise InvalidOptionError(
                "streamARN", arn, "an ARN such as arn:aws:kinesis:us-east-1:123456789012:stream/name"
            )
        region = lowered.get("region") or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        if not region and arn:
            region = arn.split(":")[3]
        if not region:
            raise InvalidOptionError(
                "region", None, "an AWS region such as us-east-1 (or AWS_REGION in the environment)"
            )
        endpoint = lowered.get("endpointurl")
        if endpoint is not None and not endpoint.startswith(("http://", "https://")):
            raise InvalidOptionError("endpointUrl", endpoint, "an http:// or https:// URL")
        key_id, secret = lowered.get("awsaccesskeyid"), lowered.get("awssecretaccesskey")
        if bool(key_id) != bool(secret):
            missing = "awsSecretAccessKey" if key_id else "awsAccessKeyId"
            raise InvalidOptionError(missing, None, "awsAccessKeyId and awsSecretAccessKey given together")
        token = lowered.get("sessiontoken")
        if token and not key_id:
            raise InvalidOptionError("awsAccessKeyId", None, "explicit keys when sessionToken is given")
        role = lowered.get("rolearn")
        if role is not None and not role.startswith("arn:"):
            raise InvalidOptionError(
                "roleArn", role, "an IAM role ARN such as arn:aws:iam::123456789012:role/reader"
            )
        credentials = KinesisCredentials(
            key_id or None,
            secret or None,
            token or None,
            role or None,
            lowered.get("rolesessionname") or "kinesis-unified",
        )
        starting = cls._starting_position(lowered)
        ending_raw = lowered.get("endingtimestamp")
        ending = parse_timestamp_ms("endingTimestamp", ending_raw) if ending_raw is not None else None
        if ending is not None and starting.timestamp_ms is not None and ending < starting.timestamp_ms:
            raise InvalidOptionError(
                "endingTimestamp", ending_raw, "a timestamp at or after startingTimestamp"
            )
        canonical = {KNOWN_OPTIONS[k]: v for k, v in lowered.items()}
        window = parse_duration_ms(canonical, "maxTimeWindowPerTrigger")
        if window is not None and window < 1:
            raise InvalidOptionError(
                "maxTimeWindowPerTrigger", lowered["maxtimewindowpertrigger"], "a positive duration"
            )
        pk_col = lowered.get("partitionkeycolumn")
        if pk_col is not None and not pk_col.strip():
            raise InvalidOptionError("partitionKeyColumn", pk_col, "a column name")
        return cls(
            stream_name=name or None,
            stream_arn=arn or None,
            region=region,
            endpoint_url=endpoint,
            credentials=credentials,
            starting_position=starting,
            ending_timestamp_ms=ending,
            shard_discovery_interval_ms=_int(
                lowered, "shardDiscoveryIntervalMs", DEFAULT_DISCOVERY_INTERVAL_MS, 1
            ),
            max_records_per_fetch=_int(
                lowered, "maxRecordsPerFetch", MAX_GET_RECORDS_LIMIT, 1, MAX_GET_RECORDS_LIMIT
            ),
            max_records_per_trigger=parse_positive_int(canonical, "maxRecordsPerTrigger"),
            max_bytes_per_trigger=parse_positive_int(canonical, "maxBytesPerTrigger"),
            max_time_window_per_trigger_ms=window,
            fail_on_data_loss=_bool(lowered, "failOnDataLoss", True),
            deaggregate=_bool(lowered, "deaggregate", False),
            safety_margin_ms=_int(lowered, "cutSafetyMarginMs", DEFAULT_SAFETY_MARGIN_MS, 0),
            partition_key_column=pk_col,
            network_timeout_ms=_int(lowered, "networkTimeoutMs", DEFAULT_NETWORK_TIMEOUT_MS, 0),
            read_timeout_ms=_int(lowered, "readTimeoutMs", DEFAULT_READ_TIMEOUT_MS, 1),
        )

    @staticmethod
    def _starting_position(lowered: Mapping[str, str]) -> StartingPosition:
        raw = lowered.get("startingposition", "LATEST")
        valid = "one of TRIM_HORIZON, LATEST, AT_TIMESTAMP (with startingTimestamp)"
        try:
            kind = StartingPositionKind(raw.strip().upper())
        except ValueError:
            raise InvalidOptionError("startingPosition", raw, valid) from None
        ts_raw = lowered.get("startingtimestamp")
        if kind is StartingPositionKind.AT_TIMESTAMP:
            if ts_raw is None:
                raise InvalidOptionError(
                    "startingTimestamp", None, "a timestamp when startingPosition is AT_TIMESTAMP"
                )
            return StartingPosition.timestamp(parse_timestamp_ms("startingTimestamp", ts_raw))
        if ts_raw is not None:
            raise InvalidOptionError("startingTimestamp", ts_raw, "only with startingPosition AT_TIMESTAMP")
        return StartingPosition(kind)
