"""``format("kafka-unified")`` for Spark's lookup of ``pyspark_*`` modules (see ``sparkflow_lookup``)."""

from sparkflow_lookup import LazyDataSource


class DefaultSource(LazyDataSource):
    """``kafka-unified``, its connector imported when a query uses it."""

    format_name = "kafka-unified"
    implementation = "connectors.kafka.datasource:KafkaDataSource"


__all__ = ["DefaultSource"]
