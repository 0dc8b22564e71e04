"""How many Spark partitions a plan aims for: ``minPartitions``, the cluster's hint, or the driver's cores.

Spark gives a Python data source no view of the session: planning runs in a Python worker with no
JVM gateway (``SparkSession.getActiveSession()`` is ``None`` there and ``defaultParallelism`` cannot
be asked, measured on pyspark 4.3). What does reach that worker is the driver JVM's environment,
which the driver's Python passes on when it starts the session (as it does ``PYSPARK_PYTHON``).
``spark.executorEnv.*`` reached it only for a source registered with ``spark.dataSource.register``
(measured, local), not for the ``pyspark_*`` modules Spark finds itself (measured, standalone). So
the target is, in order:

1. the read option ``minPartitions`` (a positive integer; Spark's Kafka source has it, and
   ``spark.sql.files.minPartitionNum`` plays the same role for Spark's file sources);
2. ``SPARKFLOW_DEFAULT_PARALLELISM`` in the driver's environment before the session starts (for
   example twice the cluster's executor cores);
3. ``os.cpu_count()`` of the planning process (right for ``local[*]``).

The bridge takes ``minPartitions`` out of the options for connectors that do not read it themselves
(their option checks refuse unknown names); a connector with its own meaning (Kafka's, which also
cuts one offset range into several tasks) declares ``reads_min_partitions`` and keeps it.
"""

from __future__ import annotations

import os
from typing import Any

from connector_base.errors import InvalidOptionError

__all__ = ["MIN_PARTITIONS", "PARALLELISM_ENV", "planning_parallelism", "take_min_partitions"]

MIN_PARTITIONS = "minPartitions"
PARALLELISM_ENV = "SPARKFLOW_DEFAULT_PARALLELISM"
_TAKEN = "_min_partitions"


def _positive(raw: str, name: str) -> int:
    text = raw.strip()
    if not text.isdigit() or int(text) < 1:
        raise InvalidOptionError(name, raw, "a positive integer")
    return int(text)


def take_min_partitions(ds: Any) -> int | None:
    """``minPartitions`` of ``ds`` (validated), taken out of its options unless the connector reads it."""
    if _TAKEN in ds.__dict__:
        taken: int | None = ds.__dict__[_TAKEN]
        return taken
    key = next((k for k in ds.options if k.lower() == MIN_PARTITIONS.lower()), None)
    value = None if key is None else _positive(ds.options[key], MIN_PARTITIONS)
    if key is not None and not getattr(ds, "reads_min_partitions", False):
        del ds.options[key]
    ds.__dict__[_TAKEN] = value
    return value


def planning_parallelism(ds: Any) -> int:
    """The number of partitions a plan of ``ds`` aims for (see the module docstring).

    Called at ``load()`` / ``start()`` too, so a bad ``minPartitions`` or environment value fails there.
    """
    chosen = take_min_partitions(ds)
    if chosen is not None:
        return chosen
    hint = os.environ.get(PARALLELISM_ENV)
    if hint:
        return _positive(hint, PARALLELISM_ENV)
    return max(1, os.cpu_count() or 1)
