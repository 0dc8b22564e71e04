"""Refusing a checkpoint written for another Kinesis stream than the options name."""

from __future__ import annotations

from collections.abc import Mapping

from connector_base.spark.restore_check import source_changed
from connectors.kinesis.options import KinesisOptions
from connectors.kinesis.split import KinesisShardSplit

__all__ = ["check_kinesis_restore"]


def check_kinesis_restore(options: KinesisOptions, splits: Mapping[str, KinesisShardSplit]) -> set[str]:
    """Fail when the offset's shards belong to another stream (shard ids repeat across streams)."""
    others = {s.stream for s in splits.values() if s.stream != options.stream}
    if others:
        raise source_changed("the Kinesis stream", others, f"streamName={options.stream}")
    return set()
