"""``kinesis-unified``: Amazon Kinesis Data Streams as a FLIP-27 source (and a sink) for Spark.

Splits are shards (``KinesisShardSplit``); a child shard of a split or merge is read only after all
its parents are finished, so order per partition key holds across resharding. Every micro-batch is
planned on the driver as ``[start, AT_TIMESTAMP T)`` per shard with a time cut ``T`` taken from the
service's clock, so a retried task or a re-run batch reads exactly the same records
(``KinesisSplitPlanner``; the design and its proof are in docs/kinesis.md).
"""

from connectors.kinesis.datasource import KinesisDataSource, schema_for
from connectors.kinesis.deaggregation import aggregate, deaggregate
from connectors.kinesis.enumerator import KinesisEnumeratorState, KinesisShardEnumerator
from connectors.kinesis.options import KinesisCredentials, KinesisOptions
from connectors.kinesis.planner import KinesisSplitPlanner
from connectors.kinesis.positions import PositionKind, ShardPosition, StartingPosition
from connectors.kinesis.record_emitter import KinesisRecordEmitter
from connectors.kinesis.source import KinesisSource, KinesisSourceReader
from connectors.kinesis.split import KinesisShardSplit, KinesisShardSplitSerializer, KinesisShardSplitState
from connectors.kinesis.split_reader import KinesisShardSplitReader

__all__ = [
    "KinesisCredentials",
    "KinesisDataSource",
    "KinesisEnumeratorState",
    "KinesisOptions",
    "KinesisRecordEmitter",
    "KinesisShardEnumerator",
    "KinesisShardSplit",
    "KinesisShardSplitReader",
    "KinesisShardSplitSerializer",
    "KinesisShardSplitState",
    "KinesisSource",
    "KinesisSourceReader",
    "KinesisSplitPlanner",
    "PositionKind",
    "ShardPosition",
    "StartingPosition",
    "aggregate",
    "deaggregate",
    "schema_for",
]
