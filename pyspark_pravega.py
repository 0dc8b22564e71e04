"""Auto-registration of ``format("pravega")`` (Spark looks up ``pyspark_*`` modules)."""

from connectors.pravega.datasource import PravegaDataSource as DefaultSource

__all__ = ["DefaultSource"]
