"""Auto-registration of ``format("kinesis-unified")`` (Spark looks up ``pyspark_*`` modules)."""

from connectors.kinesis.datasource import KinesisDataSource as DefaultSource

__all__ = ["DefaultSource"]
