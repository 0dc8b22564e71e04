"""``format("pravega")`` for Spark's lookup of ``pyspark_*`` modules (see ``sparkflow_lookup``)."""

from sparkflow_lookup import LazyDataSource


class DefaultSource(LazyDataSource):
    """``pravega``, its connector imported when a query uses it."""

    format_name = "pravega"
    implementation = "connectors.pravega.datasource:PravegaDataSource"


__all__ = ["DefaultSource"]
