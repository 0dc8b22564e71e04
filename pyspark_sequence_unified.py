"""Auto-registration of ``format("sequence-unified")`` (Spark looks up ``pyspark_*`` modules)."""

from connectors.sequence.datasource import SequenceDataSource as DefaultSource

__all__ = ["DefaultSource"]
