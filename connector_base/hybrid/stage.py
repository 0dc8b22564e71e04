"""``HybridStage``: what the hybrid source needs of each child source, and how rows conform to its schema."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import pyarrow as pa

from connector_base.source import Source
from connector_base.spark.planner import SplitPlanner

__all__ = ["HybridStage", "conform_batch", "conformance_problems"]


class HybridStage(ABC):
    """One child source of a hybrid source (a stage), built from its own options.

    The hybrid source reads the stages one after the other; every stage but the last is bounded.
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """A short name for logs and messages (the format name)."""

    @property
    @abstractmethod
    def read_schema(self) -> pa.Schema:
        """The Arrow schema the child's reader emits (conformed to the hybrid schema after)."""

    @abstractmethod
    def source(self, starting_timestamp_ms: int | None = None) -> Source[Any, Any, Any]:
        """The child source; with a timestamp, one that starts there instead of its own starting options."""

    @abstractmethod
    def planner(self, source: Source[Any, Any, Any]) -> SplitPlanner[Any]:
        """The child's Spark planner for ``source``."""


def conform_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` in ``schema``: columns matched by name and cast, missing columns null."""
    columns = []
    for field in schema:
        i = batch.schema.get_field_index(field.name)
        if i < 0:
            columns.append(pa.nulls(batch.num_rows, field.type))
        else:
            column = batch.column(i)
            columns.append(column if column.type == field.type else column.cast(field.type))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def conformance_problems(source: pa.Schema, target: pa.Schema) -> list[str]:
    """Why rows of ``source`` cannot be read as ``target`` (empty when they can)."""
    problems = []
    for field in source:
        i = target.get_field_index(field.name)
        if i < 0:
            problems.append(f"column {field.name!r} is not in the hybrid schema")
            continue
        wanted = target.field(i).type
        if field.type == wanted:
            continue
        try:
            pa.array([], type=field.type).cast(wanted)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
            problems.append(f"column {field.name!r} of type {field.type} cannot be cast to {wanted}")
    return problems
