"""``format("hybrid")`` for Spark's lookup of ``pyspark_*`` modules (see ``sparkflow_lookup``)."""

from sparkflow_lookup import LazyDataSource


class DefaultSource(LazyDataSource):
    """``hybrid``, its connector imported when a query uses it."""

    format_name = "hybrid"
    implementation = "connectors.hybrid.datasource:HybridDataSource"


__all__ = ["DefaultSource"]
