"""``format("sequence-unified")`` for Spark's lookup of ``pyspark_*`` modules (see ``sparkflow_lookup``)."""

from sparkflow_lookup import LazyDataSource


class DefaultSource(LazyDataSource):
    """``sequence-unified``, its connector imported when a query uses it."""

    format_name = "sequence-unified"
    implementation = "connectors.sequence.datasource:SequenceDataSource"


__all__ = ["DefaultSource"]
