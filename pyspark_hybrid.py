"""Auto-registration of ``format("hybrid")`` (Spark looks up ``pyspark_*`` modules)."""

from connectors.hybrid.datasource import HybridDataSource as DefaultSource

__all__ = ["DefaultSource"]
