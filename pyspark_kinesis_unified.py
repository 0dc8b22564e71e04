"""``format("kinesis-unified")`` for Spark's lookup of ``pyspark_*`` modules (see ``sparkflow_lookup``)."""

from sparkflow_lookup import LazyDataSource


class DefaultSource(LazyDataSource):
    """``kinesis-unified``, its connector imported when a query uses it."""

    format_name = "kinesis-unified"
    implementation = "connectors.kinesis.datasource:KinesisDataSource"


__all__ = ["DefaultSource"]
