"""Auto-registration of ``format("files-unified")`` (Spark looks up ``pyspark_*`` modules)."""

from connectors.files.datasource import FilesDataSource as DefaultSource

__all__ = ["DefaultSource"]
