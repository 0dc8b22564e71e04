"""``kafka-unified``: Spark's Kafka source and sink on the FLIP-27 base, built on confluent-kafka.

``spark.read`` / ``spark.readStream`` ``.format("kafka-unified")`` accept the options of Spark's
built-in ``kafka`` source and return its columns (``key, value, topic, partition, offset, timestamp,
timestampType[, headers]``). Splits are topic partitions (``KafkaPartitionSplit``), positions are
offsets, and each micro-batch is planned as ``[start, end)`` per partition on the driver, so a
retried task or a re-run batch reads the same records. See ``docs/kafka.md``.
"""

from connectors.kafka.datasource import KafkaDataSource, kafka_schema
from connectors.kafka.enumerator import KafkaEnumeratorState, KafkaSourceEnumerator
from connectors.kafka.options import KafkaSourceOptions
from connectors.kafka.planner import KafkaSplitPlanner
from connectors.kafka.positions import OffsetsInitializer
from connectors.kafka.sink import KafkaSinkOptions
from connectors.kafka.source import KafkaSource
from connectors.kafka.split import (
    KafkaPartitionSplit,
    KafkaPartitionSplitSerializer,
    KafkaPartitionSplitState,
)
from connectors.kafka.split_reader import KafkaPartitionSplitReader

__all__ = [
    "KafkaDataSource",
    "KafkaEnumeratorState",
    "KafkaPartitionSplit",
    "KafkaPartitionSplitReader",
    "KafkaPartitionSplitSerializer",
    "KafkaPartitionSplitState",
    "KafkaSinkOptions",
    "KafkaSource",
    "KafkaSourceEnumerator",
    "KafkaSourceOptions",
    "KafkaSplitPlanner",
    "OffsetsInitializer",
    "kafka_schema",
]
