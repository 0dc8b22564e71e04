"""Auto-registration of ``format("kafka-unified")`` (Spark looks up ``pyspark_*`` modules)."""

from connectors.kafka.datasource import KafkaDataSource as DefaultSource

__all__ = ["DefaultSource"]
