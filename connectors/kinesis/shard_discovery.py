"""Shard discovery: ListShards (all pages) plus the service's clock and retention, in one snapshot."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from connector_base import ConnectorError
from connectors.kinesis.client import THROTTLING_ERRORS, error_code, kinesis_client, service_time_ms
from connectors.kinesis.options import KinesisOptions

__all__ = ["ShardInfo", "StreamSnapshot", "list_stream", "call_with_retry", "wait_for_service_time"]


@dataclass(frozen=True, slots=True)
class ShardInfo:
    """One shard as ListShards reports it."""

    shard_id: str
    parent_shard_ids: tuple[str, ...]
    closed: bool


@dataclass(frozen=True, slots=True)
class StreamSnapshot:
    """Every shard of the stream, the service's clock (ms) and the retention period (hours)."""

    shards: tuple[ShardInfo, ...]
    service_now_ms: int
    retention_hours: int


def call_with_retry(fn: Any, what: str, attempts: int = 30, **kwargs: Any) -> dict[str, Any]:
    """Call ``fn(**kwargs)``, retrying throttling errors with exponential backoff (driver side)."""
    from botocore.exceptions import ClientError

    delay = 0.05
    for attempt in range(attempts):
        try:
            return dict(fn(**kwargs))
        except ClientError as e:
            if error_code(e) not in THROTTLING_ERRORS or attempt == attempts - 1:
                raise ConnectorError(f"{what} failed: {error_code(e)}: {e}") from e
            time.sleep(delay)
            delay = min(2.0, delay * 2)
    raise AssertionError("unreachable")


def _topological(shards: list[ShardInfo]) -> list[ShardInfo]:
    """Parents before children (then by shard id), so assignment order follows the stream's history."""
    by_id = {s.shard_id: s for s in shards}
    done: set[str] = set()
    out: list[ShardInfo] = []

    def visit(s: ShardInfo) -> None:
        if s.shard_id in done:
            return
        done.add(s.shard_id)
        for p in s.parent_shard_ids:
            if p in by_id:
                visit(by_id[p])
        out.append(s)

    for s in sorted(shards, key=lambda s: s.shard_id):
        visit(s)
    return out


def list_stream(options: KinesisOptions, retention_hours: int | None = None) -> StreamSnapshot:
    """List every shard (paginated), with the service's clock from the response's ``Date`` header.

    The retention period comes from DescribeStreamSummary (a call with a low account-wide rate
    limit) unless the caller passes the one it already knows.
    """
    client = kinesis_client(options)
    what = f"ListShards of stream {options.stream}"
    if retention_hours is None:
        summary = call_with_retry(
            client.describe_stream_summary,
            f"DescribeStreamSummary of stream {options.stream}",
            **options.stream_args(),
        )
        retention_hours = int(summary["StreamDescriptionSummary"].get("RetentionPeriodHours", 24))
    resp = call_with_retry(client.list_shards, what, **options.stream_args())
    raw = list(resp.get("Shards", []))
    while resp.get("NextToken"):
        resp = call_with_retry(client.list_shards, what, NextToken=resp["NextToken"])
        raw.extend(resp.get("Shards", []))
    now = service_time_ms(resp) or int(time.time()) * 1000
    shards = [
        ShardInfo(
            s["ShardId"],
            tuple(p for p in (s.get("ParentShardId"), s.get("AdjacentParentShardId")) if p),
            "EndingSequenceNumber" in s.get("SequenceNumberRange", {}),
        )
        for s in raw
    ]
    return StreamSnapshot(tuple(_topological(shards)), now, retention_hours)


def wait_for_service_time(options: KinesisOptions, target_ms: int, timeout_s: float = 30.0) -> int:
    """Wait until the service's clock is at or after ``target_ms``; return the clock then."""
    client = kinesis_client(options)
    deadline = time.monotonic() + timeout_s
    while True:
        resp = call_with_retry(
            client.describe_stream_summary, "DescribeStreamSummary", **options.stream_args()
        )
        now = service_time_ms(resp)
        if now is None or now >= target_ms:
            return now if now is not None else target_ms
        if time.monotonic() > deadline:
            raise ConnectorError(
                f"the service's clock did not reach {target_ms} within {timeout_s}s (it says {now})"
            )
        time.sleep(min(0.25, max(0.02, (target_ms - now) / 4000)))
