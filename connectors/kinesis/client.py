"""boto3 Kinesis clients: one pool per process keyed by configuration, and the service's clock.

Clients return ``ApproximateArrivalTimestamp`` as the service sent it (epoch seconds as a number)
instead of ``datetime`` objects: the reader converts whole columns at once, and the planner compares
integer milliseconds, the resolution of the service's timestamps.
"""

from __future__ import annotations

import email.utils
import logging
import threading
from typing import Any

from connectors.kinesis.options import KinesisOptions

__all__ = ["AT_TIMESTAMP_TIMEOUT_S", "kinesis_client", "service_time_ms", "error_code", "THROTTLING_ERRORS"]

LOG = logging.getLogger(__name__)

THROTTLING_ERRORS = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "LimitExceededException",
        "ThrottlingException",
        "KMSThrottlingException",
    }
)
"""Error codes that mean "try the same call again later"."""

_POOL: dict[tuple[Any, ...], Any] = {}
_POOL_LOCK = threading.Lock()


def _raw_timestamp(value: Any) -> Any:
    return value


AT_TIMESTAMP_TIMEOUT_S = 1.5
"""Read timeout of GetShardIterator AT_TIMESTAMP calls: kinesalite never answers one that has no record
at or after the timestamp; callers then fall back to TRIM_HORIZON plus a client-side skip."""


def _new_client(options: KinesisOptions, read_timeout_s: float) -> Any:
    import botocore.session
    from botocore.config import Config

    session = botocore.session.get_session()
    session.get_component("response_parser_factory").set_parser_defaults(timestamp_parser=_raw_timestamp)
    creds = options.credentials
    kwargs: dict[str, Any] = {}
    if creds.access_key_id:
        kwargs.update(
            aws_access_key_id=creds.access_key_id,
            aws_secret_access_key=creds.secret_access_key,
            aws_session_token=creds.session_token,
        )
    config = Config(
        retries={"max_attempts": 1, "mode": "standard"},
        max_pool_connections=32,
        connect_timeout=10,
        read_timeout=read_timeout_s,
    )
    if creds.role_arn:
        sts = session.create_client("sts", region_name=options.region, config=config, **kwargs)
        assumed = sts.assume_role(RoleArn=creds.role_arn, RoleSessionName=creds.role_session_name)[
            "Credentials"
        ]
        kwargs = dict(
            aws_access_key_id=assumed["AccessKeyId"],
            aws_secret_access_key=assumed["SecretAccessKey"],
            aws_session_token=assumed["SessionToken"],
        )
    return session.create_client(
        "kinesis", region_name=options.region, endpoint_url=options.endpoint_url, config=config, **kwargs
    )


def kinesis_client(options: KinesisOptions, read_timeout_s: float = 60.0) -> Any:
    """A pooled client for ``options`` (one per configuration and process; boto3 clients are thread-safe).

    Client-side retries are off: the split reader and the planner retry throttling themselves, so a
    retry never hides which call failed.
    """
    key = (*options.client_key(), read_timeout_s)
    with _POOL_LOCK:
        client = _POOL.get(key)
        if client is None:
            client = _new_client(options, read_timeout_s)
            _POOL[key] = client
        return client


def service_time_ms(response: dict[str, Any]) -> int | None:
    """The service's clock from a response's ``Date`` header (whole seconds), as epoch milliseconds."""
    date = response.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
    if not date:
        return None
    parsed = email.utils.parsedate_to_datetime(date)
    return int(parsed.timestamp()) * 1000


def error_code(error: BaseException) -> str | None:
    """The service error code of a botocore ``ClientError`` (else ``None``)."""
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        return str(code) if code else None
    return None
