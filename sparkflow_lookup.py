"""What the ``pyspark_*`` modules register: a ``DataSource`` that imports its connector only when used.

Spark finds this package's formats (``kafka-unified``, ``files-unified``, ...) by importing every
``pyspark_*`` module on the path in one Python worker, at a session's first Python data source, and
keeping each module's ``DefaultSource`` class by reference. Had each module imported its connector,
that worker would import all six connectors and pyarrow (about 0.7 s on a quiet core, several
seconds on a loaded one) before the first query could be planned, even when it reads one format. So a
``pyspark_*`` module defines a ``LazyDataSource``: the name Spark registers and where the connector's
class lives; creating one (Spark's planner does, with the query's options) imports that class and
returns an instance of it, so everything after planning (readers, writers, their pickles) is the
connector's own.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

from pyspark.sql.datasource import DataSource


class LazyDataSource(DataSource):
    """A ``DataSource`` standing for ``implementation`` (``"package.module:ClassName"``) until created."""

    format_name: ClassVar[str]
    implementation: ClassVar[str]

    def __new__(cls, options: dict[str, str]) -> Any:
        """An instance of the implementation (not of ``cls``, so Python calls no ``__init__`` after)."""
        return cls.resolve()(options=options)

    @classmethod
    def resolve(cls) -> type[DataSource]:
        """The connector's ``DataSource`` class (imported on the first call)."""
        module_name, _, class_name = cls.implementation.partition(":")
        resolved: type[DataSource] = getattr(importlib.import_module(module_name), class_name)
        return resolved

    @classmethod
    def name(cls) -> str:
        """The format's name, as the implementation's ``name()`` gives it."""
        return cls.format_name
