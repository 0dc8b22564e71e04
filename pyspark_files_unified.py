"""``format("files-unified")`` for Spark's lookup of ``pyspark_*`` modules (see ``sparkflow_lookup``)."""

from sparkflow_lookup import LazyDataSource


class DefaultSource(LazyDataSource):
    """``files-unified``, its connector imported when a query uses it."""

    format_name = "files-unified"
    implementation = "connectors.files.datasource:FilesDataSource"


__all__ = ["DefaultSource"]
