"""boto3 Kinesis clients: one pool per process keyed by configuration, and the service's clock.

Clients return ``ApproximateArrivalTimestamp`` as the service sent it (epoch seconds as a number)
instead of ``datetime`` objects: the reader converts whole columns at once, and the planner compares
integer milliseconds, the resolution of the service's timestamps.

Read calls (``RETRIED_ON_NETWORK_ERRORS``) that fail on the network (connection refused or reset,
no answer within ``readTimeoutMs``) are sent again, with backoff, until ``networkTimeoutMs`` has
passed since the first failure; then a ``ConnectorError`` names the call, the endpoint and the
option. Writes are never sent again here (a PutRecords whose answer was lost may have written).
"""

from __future__ import annotations

import email.utils
import functools
import logging
import threading
import time
from typing import Any

from connector_base import ConnectorError
from connectors.kinesis.options import KinesisOptions

__all__ = [
    "AT_TIMESTAMP_TIMEOUT_S",
    "RETRIED_ON_NETWORK_ERRORS",
    "THROTTLING_ERRORS",
    "error_code",
    "kinesis_client",
    "service_time_ms",
]

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


RETRIED_ON_NETWORK_ERRORS = frozenset(
    {
        "get_records",
        "get_shard_iterator",
        "list_shards",
        "describe_stream",
        "describe_stream_summary",
        "list_streams",
    }
)
"""Calls that read only: sending one again after a lost answer changes nothing."""
NETWORK_RETRY_FIRST_DELAY_S = 0.2
NETWORK_RETRY_MAX_DELAY_S = 2.0


class _NetworkRetryingClient:
    """A boto3 client whose read calls are retried on network errors, within ``networkTimeoutMs``.

    Threading: as thread-safe as the boto3 client it wraps; it holds no state between calls.
    """

    def __init__(self, client: Any, options: KinesisOptions, retry_read_timeouts: bool) -> None:
        from botocore.exceptions import ConnectionError as BotoConnectionError
        from botocore.exceptions import HTTPClientError, ReadTimeoutError

        self._client = client
        self._bound_s = options.network_timeout_ms / 1000.0
        self._bound_ms = options.network_timeout_ms
        self._endpoint = options.endpoint_url or f"Kinesis in {options.region}"
        self._errors: tuple[type[BaseException], ...] = (BotoConnectionError, HTTPClientError)
        self._not_retried: tuple[type[BaseException], ...] = (
            () if retry_read_timeouts else (ReadTimeoutError,)
        )

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name in RETRIED_ON_NETWORK_ERRORS:
            return functools.partial(self._call, name, attr)
        return attr

    def _call(self, name: str, fn: Any, **kwargs: Any) -> Any:
        began: float | None = None
        delay = NETWORK_RETRY_FIRST_DELAY_S
        while True:
            try:
                return fn(**kwargs)
            except self._errors as e:
                if isinstance(e, self._not_retried):
                    raise
                now = time.monotonic()
                began = now if began is None else began
                if now - began >= self._bound_s:
                    raise ConnectorError(
                        f"Kinesis {name} at {self._endpoint} failed on the network for {now - began:.1f} s, "
                        f"longer than networkTimeoutMs={self._bound_ms}: {type(e).__name__}: {e}"
                    ) from e
                LOG.info("Kinesis %s failed on the network, retrying in %.1f s: %s", name, delay, e)
                time.sleep(delay)
                delay = min(NETWORK_RETRY_MAX_DELAY_S, delay * 2)


def kinesis_client(options: KinesisOptions, read_timeout_s: float | None = None) -> Any:
    """A pooled client for ``options`` (one per configuration and process; boto3 clients are thread-safe).

    ``read_timeout_s`` defaults to ``readTimeoutMs``; a shorter one (``AT_TIMESTAMP_TIMEOUT_S``) is
    an answer the caller handles, so its read timeouts are not retried. botocore's own retries are
    off: the split reader and the planner retry throttling themselves, and network errors are
    retried here, so a retry never hides which call failed.
    """
    timeout_s = options.read_timeout_ms / 1000.0 if read_timeout_s is None else read_timeout_s
    key = (*options.client_key(), timeout_s, options.network_timeout_ms)
    with _POOL_LOCK:
        client = _POOL.get(key)
        if client is None:
            retry_read_timeouts = read_timeout_s is None
            client = _NetworkRetryingClient(_new_client(options, timeout_s), options, retry_read_timeouts)
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
